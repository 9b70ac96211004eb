// The paced changes of bench/webhook-fanout.ts, run as a child process so that the client's own work
// (building, sending and reading a few hundred requests a second) does not share an event loop with the
// API, the worker and the webhook receiver it measures. Reads the scenario as JSON from the file named
// by argv[2]: { api, key, codes, rate }. The i-th change (a PICKED_UP event on codes[i]) starts at
// i / rate s whatever the answers, as a steady stream of changes would. Prints JSON: { answeredAt, seconds },
// answeredAt mapping each code to the moment its 201 arrived in ms since the epoch with sub-millisecond
// precision (performance.timeOrigin + performance.now(), comparable across processes of one machine).
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';

const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const dispatcher = new Agent({ connections: 64 });
const now = () => performance.timeOrigin + performance.now();
const answeredAt = {};
const t0 = performance.now();
await Promise.all(
  s.codes.map(async (code, i) => {
    const due = t0 + (i * 1000) / s.rate - performance.now();
    if (due > 0) await new Promise((r) => setTimeout(r, due));
    const res = await request(`${s.api}/v1/partner/orders/${code}/events`, {
      method: 'POST',
      headers: { 'x-api-key': s.key, 'content-type': 'application/json' },
      body: '{"type":"PICKED_UP"}',
      dispatcher,
    });
    await res.body.arrayBuffer();
    if (res.statusCode !== 201) throw new Error(`event on ${code}: HTTP ${res.statusCode}`);
    answeredAt[code] = now();
  }),
);
const seconds = (performance.now() - t0) / 1000;
await dispatcher.close();
process.stdout.write(JSON.stringify({ answeredAt, seconds }));
