// Clients of bench/upload-burst.ts, each run as a child process of its own (so that neither shares an
// event loop with the API or with the other). The scenario is JSON in argv[2]:
//  - { role: 'reads', base, key, count }: the bystander. After a `go` line on stdin, reads
//    GET /v1/partner/orders, then GET /v1/partner/payment-intents, then GET /readyz (as a load balancer
//    would), one at a time, until it has made `count` reads of its partner's, or, without `count`, until
//    a `stop` line (and at least 20 reads). Prints { reads: [{ status, ms }], ready: [status] }.
//  - { role: 'burst', base, key, uploads, concurrency, bytes, body }: partner A's burst. `uploads` photos
//    of `bytes` bytes, `concurrency` at a time (a refused one is not retried); `body` 'random' (a
//    real photo: nothing to compress) or 'filler' (test/upload-abuse.e2e.test.ts's bytes). Prints
//    `sending` when it starts, then { statuses: [status], ms: [ms] } (status 0: no answer).
// Each prints its own CPU time as `cpuMs` too.
import { randomFillSync } from 'node:crypto';
import { createInterface } from 'node:readline';

const s = JSON.parse(process.argv[2]);

async function timed(url, init) {
  const started = performance.now();
  try {
    const res = await fetch(url, init);
    const body = await res.text();
    const ms = Math.round((performance.now() - started) * 10) / 10;
    // An error's code (the envelope's), to tell a deadline from a refusal.
    if (res.status >= 500) return { status: res.status, ms, code: body.match(/"code":"(\w+)"/)?.[1] ?? null };
    return { status: res.status, ms };
  } catch {
    return { status: 0, ms: Math.round((performance.now() - started) * 10) / 10 };
  }
}

async function reads() {
  const lines = createInterface({ input: process.stdin });
  let stop = false;
  let go;
  const started = new Promise((resolve) => {
    go = resolve;
  });
  lines.on('line', (line) => {
    if (line === 'go') go();
    if (line === 'stop') stop = true;
  });
  await started;
  const headers = { 'x-api-key': s.key };
  const out = { reads: [], ready: [] };
  const enough = () => (s.count ? out.reads.length >= s.count : stop && out.reads.length >= 20);
  while (!enough()) {
    out.reads.push(await timed(`${s.base}/v1/partner/orders`, { headers }));
    out.reads.push(await timed(`${s.base}/v1/partner/payment-intents`, { headers }));
    out.ready.push((await timed(`${s.base}/readyz`)).status);
  }
  lines.close();
  return out;
}

/** A JPEG's first bytes and its end marker around `bytes` of filler. */
function photo(bytes, body) {
  const b = Buffer.alloc(bytes, 0x11);
  if (body === 'random') randomFillSync(b);
  b.set([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00], 0);
  b.set([0xff, 0xd9], bytes - 2);
  return b;
}

async function burst() {
  const bytes = photo(s.bytes, s.body);
  const out = { statuses: [], ms: [] };
  let next = 0;
  process.stdout.write('sending\n');
  await Promise.all(
    Array.from({ length: s.concurrency }, async () => {
      while (next < s.uploads) {
        next++;
        const r = await timed(`${s.base}/v1/partner/uploads`, {
          method: 'POST',
          headers: { 'x-api-key': s.key, 'content-type': 'image/jpeg' },
          body: bytes,
        });
        out.statuses.push(r.status);
        out.ms.push(r.ms);
      }
    }),
  );
  return out;
}

const result = s.role === 'reads' ? await reads() : await burst();
const cpu = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ ...result, cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`);
