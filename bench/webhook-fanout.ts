import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { createContext } from '../src/context.js';
import { signAccessToken } from '../src/modules/auth/tokens.js';
import { newId } from '../src/shared/ids.js';
import { startWorker } from '../src/worker/worker.js';
import { arg } from './args.js';
import type { Seeded } from './hot-paths-seed.js';
import { startProfile } from './profile.js';
import { percentile } from './stats.js';

const run = promisify(execFile);

/** Now, in ms since the epoch with sub-millisecond precision: comparable with bench/paced-changes.mjs's. */
const epochMs = (): number => performance.timeOrigin + performance.now();

/** Paced changes from a child process (bench/paced-changes.mjs): when each change's answer arrived. */
async function pacedChanges(scenario: {
  api: string;
  key: string;
  codes: string[];
  rate: number;
}): Promise<{ answeredAt: Record<string, number>; seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-paced-'));
  const file = join(dir, 'scenario.json');
  writeFileSync(file, JSON.stringify(scenario));
  try {
    const { stdout } = await run(process.execPath, ['bench/paced-changes.mjs', file], { maxBuffer: 64 * 1024 * 1024 });
    return JSON.parse(stdout) as { answeredAt: Record<string, number>; seconds: number };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

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

/** The webhook receiver, a child process (bench/webhook-receiver.mjs), and how to read what it received. */
async function startReceiver(): Promise<{
  port: number;
  count: (atLeast?: number) => Promise<{ received: number; at: number | null }>;
  receipts: () => Promise<Map<string, number[]>>;
  stop: () => void;
}> {
  const child = spawn(process.execPath, ['bench/webhook-receiver.mjs'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const stop = () => {
    child.stdin.end();
    child.kill();
  };
  process.once('exit', stop);
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const line = text.indexOf('\n');
      if (line !== -1) resolve((JSON.parse(text.slice(0, line)) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`the webhook receiver ended (${code}) before it listened`)));
  });
  const read = async (path: string) =>
    (await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(120_000) })).json();
  return {
    port,
    count: async (atLeast = 0) => (await read(`/count?atLeast=${atLeast}`)) as { received: number; at: number | null },
    receipts: async () => new Map(Object.entries((await read('/receipts')) as Record<string, number[]>)),
    stop,
  };
}

/**
 * Webhook fan-out: WEBHOOKS endpoints subscribed to order.status_changed on the bench key, a local
 * receiver in a child process answering 204 at once, and WEBHOOK_CHANGES order status changes made through the partner API,
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
  const receiver = await startReceiver();
  const url = `http://localhost:${receiver.port}/hook`;
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
    sentAt.set(code, epochMs());
  };
  /**
   * Waits until the receiver has `count` deliveries, 2 min at most: how many it has, and when the
   * `count`-th arrived (null when they did not all arrive in time).
   */
  const waitFor = async (count: number): Promise<{ received: number; at: number | null }> => {
    try {
      return await receiver.count(count);
    } catch {
      return { received: (await receiver.count()).received, at: null };
    }
  };

  const out: Record<string, Record<string, number>> = {};
  for (const [run, log] of WEBHOOK_RUNS.entries()) {
    console.log(`webhook fan-out, changes through the API with the request log ${log}:`);
    const codes = seeded.webhookCodes.slice(run * WEBHOOK_CHANGES, (run + 1) * WEBHOOK_CHANGES);
    out[log] = await webhookRun(bases[log], codes, log);
  }
  receiver.stop();
  return out;

  /** Paced changes by the second they were made in: when in a run the latency goes (a warming process). */
  function printBySecond(codes: string[], receipts: Map<string, number[]>): void {
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
    const start = (await receiver.count()).received;
    if (LATENCY_RATE > 0) {
      // Open loop, from a child process (bench/paced-changes.mjs): the i-th change starts at i / rate s, as
      // a steady stream of changes would, and the client's work stays off the measured event loop.
      const paced = await pacedChanges({ api, key: seeded.key, codes: latencyCodes, rate: LATENCY_RATE });
      for (const [code, at] of Object.entries(paced.answeredAt)) sentAt.set(code, at);
      console.log(`  paced: ${latencyCodes.length} changes in ${paced.seconds.toFixed(1)} s`);
    } else {
      for (const code of latencyCodes) {
        await change(api, code);
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    await waitFor(start + latencyCodes.length * hooks);
    const receipts = await receiver.receipts();
    const latencies: number[] = [];
    for (const code of latencyCodes) {
      const sent = sentAt.get(code);
      for (const at of receipts.get(code) ?? []) if (sent !== undefined) latencies.push(at - sent);
    }
    latencies.sort((a, b) => a - b);
    if (LATENCY_RATE > 0) printBySecond(latencyCodes, receipts);

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
    const before = (await receiver.count()).received;
    const profiling = PROFILE ? await startProfile() : null;
    const t0 = epochMs();
    worker = startWorker(ctx);
    const burst = await waitFor(before + burstCodes.length * hooks);
    const received = burst.received;
    const t1 = burst.at ?? epochMs();
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
