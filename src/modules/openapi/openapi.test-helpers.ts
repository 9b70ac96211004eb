/**
 * Helpers for the OpenAPI tests: the documents as a deployment serves them, and the check that a real
 * answer validates against the documented response of its operation and status (Ajv over the
 * document's own schemas, converted as a partner's tools read them: test/openapi-json-schema.ts).
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { componentsToJsonSchema, openApiToJsonSchema } from '../../../test/openapi-json-schema.js';

export const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

export type Doc = {
  openapi: string;
  info: { version: string };
  paths: Record<
    string,
    Record<
      string,
      {
        responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
        security?: unknown[];
        parameters?: Array<{ name: string; in: string }>;
      }
    >
  >;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

/** Public base URLs as a deployment configures them (in development they default to localhost). */
export const PUBLIC_URLS = {
  PUBLIC_URL: 'https://partners.trade-center.az',
  SANDBOX_PUBLIC_URL: 'https://sandbox.partners.trade-center.az',
};

export interface ServedDocuments {
  t: TestApp;
  /** GET /v1/developer/openapi.json: the partner and developer operations. */
  doc: Doc;
  /** The body of GET /v1/developer/openapi.json, as served. */
  reducedBody: string;
  /** GET /v1/openapi.json: every operation. */
  full: Doc;
  /** The body of GET /v1/openapi.json, as served. */
  fullBody: string;
}

/**
 * An app for the whole file (public URLs configured unless `env` says otherwise) and both documents it
 * serves; closed when the file ends.
 */
export function setUpServedDocuments(bind: (served: ServedDocuments) => void, env: Record<string, string> = PUBLIC_URLS): void {
  let t: TestApp | undefined;
  beforeAll(async () => {
    t = await createTestApp({ env });
    const reduced = await t.live.inject({ method: 'GET', url: '/v1/developer/openapi.json' });
    expect(reduced.statusCode).toBe(200);
    const full = await t.live.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(full.statusCode).toBe(200);
    bind({ t, doc: reduced.json(), reducedBody: reduced.body, full: full.json(), fullBody: full.body });
  });
  afterAll(() => t?.close());
}

/** Every operation of the document as `METHOD /path`, sorted. */
export function operations(doc: Doc): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}

export type AnswerCheck = (method: string, path: string, res: { statusCode: number; body: string }) => void;

/**
 * The check of real answers against `doc` (the full document, GET /v1/openapi.json): the operation
 * documents the answer's status, and the body validates against that response's schema; an answer
 * documented without a body has none.
 */
export function documentedAnswerCheck(doc: Doc): AnswerCheck {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', components: componentsToJsonSchema(doc.components) });
  const rebase = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
  return (method, path, res) => {
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect(op, `${method} ${path} is documented`).toBeDefined();
    const response = op.responses[String(res.statusCode)];
    expect(response, `${method} ${path} documents status ${res.statusCode}: ${res.body}`).toBeDefined();
    const schema = response.content?.['application/json']?.schema;
    if (!schema) {
      expect(res.body, `${method} ${path} ${res.statusCode} is documented without a body`).toBe('');
      return;
    }
    const validate = ajv.compile(rebase(openApiToJsonSchema(schema)));
    const ok = validate(JSON.parse(res.body));
    expect(validate.errors ?? [], `${method} ${path} ${res.statusCode}`).toEqual([]);
    expect(ok).toBe(true);
  };
}
