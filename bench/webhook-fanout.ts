import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { createContext } from '../src/context.js';
import { signAccessToken } from '../src/modules/auth/tokens.js';
import { newId } from '../src/shared/ids.js';
import { startWorker } from '../src/worker/worker.js';
import { arg } from './args.js';
import type { Seeded } from './hot-paths-seed.js';
import { startProfile } from './profile.js';
import { percentile } from './stats.js';

const WEBHOOKS = Number(arg('webhooks', '5'));
const LATENCY_CHANGES = Number(arg('latency-changes', '300'));
/** Changes a second in the latency part, started on a timer whatever the answers (0: one at a time, 10 ms apart). */
const LATENCY_RATE = Number(arg('latency-rate', '0'));
const BURST_CHANGES = Number(arg('burst-changes', '1000'));
const WEBHOOK_CHANGES = LATENCY_CHANGES + BURST_CHANGES;
const PROFILE = process.argv.includes('--profile');
/**
 * The webhook fan-out runs twice: changes made through the API with the request log on, then off.
 * `--webhook-runs` lists the runs in order (`off,on`; `on,on,off`: the first run of a process is the
 * slower, so a warm-up run can go first); the figures kept are each setting's last run.
 */
export const WEBHOOK_RUNS = arg('webhook-runs', 'on,off')
  .split(',')
  .map((run) => {
    if (run !== 'on' && run !== 'off') throw new Error(`--webhook-runs takes on and off, not ${run}`);
    return run;
  });
/** The orders the fan-out changes (each once), seeded on the bench key. */
export const WEBHOOK_ORDERS = WEBHOOK_CHANGES * WEBHOOK_RUNS.length;

/**
 * Webhook fan-out: WEBHOOKS endpoints subscribed to order.status_changed on the bench key, a local
 * receiver answering 204 at once, and WEBHOOK_CHANGES order status changes made through the partner API,
 * once through the API with the request log on and once with it off (`bases`).
 * Deliveries/s = all deliveries / (last receipt − first change); latency = receipt − API answer of the
 * change that caused it.
 */
export async function benchWebhooks(
  ctx: Awaited<ReturnType<typeof createContext>>,
  bases: Record<'on' | 'off', string>,
  seeded: Seeded,
): Promise<Record<string, Record<string, number>>> {
  const base = bases.on;
  const receipts = new Map<string, number[]>();
  let received = 0;
  const receiver = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      res.statusCode = 204;
      res.end();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const code = body?.data?.order?.code as string | undefined;
        if (code) {
          const list = receipts.get(code) ?? [];
          list.push(at);
          receipts.set(code, list);
        }
      } catch {}
      received++;
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const url = `http://localhost:${(receiver.address() as AddressInfo).port}/hook`;
  // Earlier scenarios left outbox rows behind; the endpoints created below must not receive that backlog.
  // Hundreds of thousands of rows after the events scenario on a fast machine: longer than a request's
  // statement timeout.
  await ctx.db.withTimeout(300_000).query('UPDATE outbox SET processed_at = $1 WHERE processed_at IS NULL', [ctx.clock.now()]);
  const partnerToken = await signAccessToken(ctx.secrets.jwtKey, ctx.clock, {
    userId: (
      await ctx.db.query<{ id: string }>(
        `INSERT INTO users (id, phone, role, partner_id, created_at) VALUES ($1, '+994508888888', 'PARTNER', $2, now()) RETURNING id`,
        [newId(), seeded.partnerId],
      )
    )[0].id,
    role: 'PARTNER',
    partnerId: seeded.partnerId,
  });
  const auth = { authorization: `Bearer ${partnerToken}`, 'content-type': 'application/json' };
  // The key carries up to 5 webhooks; more endpoints use more keys of the same partner.
  for (let i = 0; i < WEBHOOKS; i++) {
    const res = await fetch(`${base}/v1/developer/webhooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ apiKeyId: seeded.keyId, url: `${url}?n=${i}`, events: ['order.status_changed'] }),
    });
    if (res.status !== 201) {
      console.log(`webhook ${i}: ${res.status} ${await res.text()}`);
      break;
    }
  }
  const hooks = (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks'))[0].n;
  const sentAt = new Map<string, number>();
  const change = async (api: string, code: string) => {
    const res = await fetch(`${api}/v1/partner/orders/${code}/events`, {
      method: 'POST',
      headers: { 'x-api-key': seeded.key, 'content-type': 'application/json' },
      body: '{"type":"PICKED_UP"}',
    });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`event on ${code}: HTTP ${res.status}`);
    sentAt.set(code, performance.now());
  };
  const waitFor = async (count: number) => {
    const deadline = performance.now() + 120_000;
    while (received < count && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  };

  const out: Record<string, Record<string, number>> = {};
  for (const [run, log] of WEBHOOK_RUNS.entries()) {
    console.log(`webhook fan-out, changes through the API with the request log ${log}:`);
    const codes = seeded.webhookCodes.slice(run * WEBHOOK_CHANGES, (run + 1) * WEBHOOK_CHANGES);
    out[log] = await webhookRun(bases[log], codes, log);
  }
  receiver.close();
  return out;

  /** Paced changes by the second they were made in: when in a run the latency goes (a warming process). */
  function printBySecond(codes: string[]): void {
    const first = Math.min(...codes.map((c) => sentAt.get(c) ?? Number.POSITIVE_INFINITY));
    const bySecond = new Map<number, number[]>();
    for (const code of codes) {
      const sent = sentAt.get(code);
      if (sent === undefined) continue;
      const second = Math.floor((sent - first) / 1000);
      const list = bySecond.get(second) ?? [];
      for (const at of receipts.get(code) ?? []) list.push(at - sent);
      bySecond.set(second, list);
    }
    for (const [second, list] of [...bySecond].sort((a, b) => a[0] - b[0])) {
      list.sort((a, b) => a - b);
      console.log(
        `  second ${second}: ${list.length} receipts, p50 ${percentile(list, 50).toFixed(0)} ms, p99 ${percentile(list, 99).toFixed(0)} ms`,
      );
    }
  }

  async function webhookRun(api: string, codes: string[], log: string): Promise<Record<string, number>> {
    // Latency: the worker runs; changes arrive at a steady pace (one in flight) and each is timed from the
    // API's answer to the receipt of its deliveries.
    let worker = startWorker(ctx);
    const latencyCodes = codes.slice(0, LATENCY_CHANGES);
    const start = received;
    if (LATENCY_RATE > 0) {
      // Open loop: the i-th change starts at i / rate s, as a steady stream of operators' changes would.
      const t0 = performance.now();
      await Promise.all(
        latencyCodes.map(async (code, i) => {
          const due = t0 + (i * 1000) / LATENCY_RATE - performance.now();
          if (due > 0) await new Promise((r) => setTimeout(r, due));
          await change(api, code);
        }),
      );
      console.log(`  paced: ${latencyCodes.length} changes in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } else {
      for (const code of latencyCodes) {
        await change(api, code);
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    await waitFor(start + latencyCodes.length * hooks);
    const latencies: number[] = [];
    for (const code of latencyCodes) {
      const sent = sentAt.get(code);
      for (const at of receipts.get(code) ?? []) if (sent !== undefined) latencies.push(at - sent);
    }
    latencies.sort((a, b) => a - b);
    if (LATENCY_RATE > 0) printBySecond(latencyCodes);

    // Throughput: with the worker stopped, a burst of changes fills the outbox; then the worker starts and
    // fans out and delivers all of them.
    await worker.stop();
    const burstCodes = codes.slice(LATENCY_CHANGES);
    const queue = [...burstCodes];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let code = queue.shift(); code; code = queue.shift()) await change(api, code);
      }),
    );
    const before = received;
    const profiling = PROFILE ? await startProfile() : null;
    const t0 = performance.now();
    worker = startWorker(ctx);
    await waitFor(before + burstCodes.length * hooks);
    const t1 = performance.now();
    if (profiling) await profiling.stop(`webhook fan-out burst (log ${log})`);
    await worker.stop();

    const figures = {
      endpoints: hooks,
      'deliveries in the burst': received - before,
      'deliveries/s': Math.round(((received - before) / (t1 - t0)) * 1000),
      'change→receipt p50 ms': Math.round(percentile(latencies, 50) * 10) / 10,
      'change→receipt p99 ms': Math.round(percentile(latencies, 99) * 10) / 10,
    };
    for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(34)} ${v}`);
    return figures;
  }
}
