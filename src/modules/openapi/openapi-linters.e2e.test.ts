/**
 * Both served documents (the partner and developer one, and the full one) pass the tools partners run
 * on them: Spectral's OpenAPI and OWASP rulesets, swagger-parser's schema validation, Redocly's linter.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import spectralCore from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { describe, expect, it } from 'vitest';
import { setUpServedDocuments } from './openapi.test-helpers.js';

const run = promisify(execFile);
const { Spectral, Document } = spectralCore;

/** Folders holding reduced.json and full.json, the documents as served. */
function servedInto(env?: Record<string, string>): () => string {
  let dir = '';
  setUpServedDocuments(({ reducedBody, fullBody }) => {
    dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    writeFileSync(join(dir, 'reduced.json'), reducedBody);
    writeFileSync(join(dir, 'full.json'), fullBody);
  }, env);
  return () => dir;
}
/** With PUBLIC_URL and SANDBOX_PUBLIC_URL set to https addresses, as a deployment serves them. */
const deployed = servedInto();
/** With neither set: as a server started by `npm start` serves them (http on the loopback address). */
const local = servedInto({});
const bothConfigs = () => [deployed(), local()];

describe('the served documents under the linters', () => {
  it('passes Spectral (spectral:oas) with no error and no warning, both documents, deployed and local', async () => {
    const spectral = new Spectral();
    spectral.setRuleset(oas as Parameters<typeof spectral.setRuleset>[0]);
    for (const dir of bothConfigs()) {
      for (const file of ['reduced.json', 'full.json']) {
        const results = await spectral.run(new Document(readFileSync(join(dir, file), 'utf8'), Parsers.Json, file));
        expect(
          results.map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`),
          file,
        ).toEqual([]);
      }
    }
  }, 60_000);

  // Deployed only: OWASP's no-server-http rule rightly refuses the http:// of a local server.
  it('passes the OWASP ruleset (spectral-owasp.mjs, @stoplight/spectral-owasp-ruleset) with no error, both documents, deployed', async () => {
    const dir = deployed();
    // The committed ruleset file, as `spectral lint -r spectral-owasp.mjs` reads it.
    const ruleset = (await import(join(import.meta.dirname, '../../../spectral-owasp.mjs'))).default;
    const spectral = new Spectral();
    spectral.setRuleset(ruleset as Parameters<typeof spectral.setRuleset>[0]);
    for (const file of ['reduced.json', 'full.json']) {
      const results = await spectral.run(new Document(readFileSync(join(dir, file), 'utf8'), Parsers.Json, file));
      expect(
        results.filter((r) => r.severity === 0).map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`),
        file,
      ).toEqual([]);
    }
  }, 60_000);

  it('validates against the OpenAPI 3.0 schema (swagger-parser)', async () => {
    await expect(SwaggerParser.validate(join(deployed(), 'reduced.json'))).resolves.toBeTruthy();
    await expect(SwaggerParser.validate(join(deployed(), 'full.json'))).resolves.toBeTruthy();
  });

  it('passes the Redocly linter (recommended rules) with no error and no warning, both documents, deployed and local', async () => {
    for (const dir of bothConfigs()) {
      for (const file of ['reduced.json', 'full.json']) {
        const { stdout } = await run(
          process.execPath,
          ['node_modules/@redocly/cli/bin/cli.js', 'lint', join(dir, file), '--format=json'],
          {
            env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
            maxBuffer: 10 * 1024 * 1024,
          },
        ).catch((err: { stdout: string }) => ({ stdout: err.stdout }));
        const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
        const problems = report.problems.map((p: { ruleId: string; message: string }) => `${p.ruleId}: ${p.message}`);
        expect(problems, `${dir}/${file}`).toEqual([]);
      }
    }
  }, 120_000);
});
