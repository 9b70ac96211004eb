// A smoke run of the built service, SDK and CLI on the Node.js this script runs on (CI runs it on a
// supported line the test passes do not use: `node .ci/node-smoke.mjs 22`). The built server starts
// (`dist/src/main.js start`, embedded database, OS-chosen ports), answers /readyz and a partner route
// through the SDK, the CLI prints its help, and SIGTERM stops the server cleanly. Exits 1 on any failure.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';

const expectedMajor = process.argv[2];
const major = process.versions.node.split('.')[0];
if (expectedMajor) assert.equal(major, expectedMajor, `running on Node ${process.version}, expected ${expectedMajor}`);
console.log(`Node ${process.version}`);

const server = spawn(process.execPath, ['dist/src/main.js', 'start'], {
  env: {
    ...process.env,
    DATABASE_URL: '',
    REDIS_URL: '',
    DATA_DIR: 'memory://',
    HOST: '127.0.0.1',
    PORT: '0',
    SANDBOX_PORT: '0',
    METRICS_PORT: 'off',
    LOG_LEVEL: 'info',
    SHUTDOWN_DRAIN_MS: '0',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const deadline = setTimeout(() => {
  console.error('smoke run: no answer within 120 s');
  server.kill('SIGKILL');
  process.exit(1);
}, 120_000);
const exited = new Promise((resolve) => server.on('exit', (code) => resolve(code)));

try {
  const port = await new Promise((resolve, reject) => {
    let buffered = '';
    server.stdout.setEncoding('utf8');
    server.stdout.on('data', (chunk) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.includes('"started"')) continue;
        const entry = JSON.parse(line);
        if (entry.msg === 'started') resolve(entry.port);
      }
    });
    exited.then((code) => reject(new Error(`the server exited (${code}) before it started`)));
  });
  const base = `http://127.0.0.1:${port}`;

  const ready = await fetch(`${base}/readyz`);
  assert.equal(ready.status, 200, await ready.text());
  console.log('/readyz 200');

  // A partner route through the SDK: an unknown key is refused with the error envelope, typed.
  const { createPartnerClient, PartnerApiError } = await import('../packages/sdk/dist/index.js');
  const partner = createPartnerClient({ apiKey: `svc_live_${'0'.repeat(40)}`, baseUrl: base, retry: false });
  const refused = await partner.me().then(
    () => null,
    (err) => err,
  );
  assert.ok(refused instanceof PartnerApiError, `expected a PartnerApiError, got ${refused}`);
  assert.equal(refused.status, 401);
  assert.match(refused.code, /^ERR_API_KEY_INVALID$|^ERR_UNAUTHORIZED$/);
  console.log(`SDK: GET /v1/partner/me → ${refused.status} ${refused.code}`);

  const cli = spawnSync(process.execPath, ['packages/cli/bin/partner.js', '--help'], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(cli.stdout, /^Usage: partner /);
  console.log('CLI: partner --help');

  server.kill('SIGTERM');
  assert.equal(await exited, 0);
  console.log('SIGTERM: exit 0');
  clearTimeout(deadline);
} catch (err) {
  console.error(err);
  server.kill('SIGKILL');
  process.exit(1);
}
