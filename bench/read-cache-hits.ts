/**
 * What a hit of the partner read cache costs in itself (docs/performance.md, "Partner reads"): a cache
 * filled with N answers of 1.2 KB, then hits on a few of them again and again (a partner polling its
 * page in a big cache) and on all of them in rotation. No HTTP, no database: the figures hold on a busy
 * machine, where the throughput of a route would be noise.
 * Usage: npx tsx bench/read-cache-hits.ts [N=2400,20000]
 */
import { PartnerOrderCache } from '../src/modules/orders/read-cache.js';

const sizes = (process.argv[2] ?? '2400,20000').split(',').map(Number);
const HITS = 2_000_000;
const clock = { nowMs: () => 0 };
const scope = { environment: 'LIVE' as const, keyId: '00000000-0000-4000-8000-000000000001' };
const body = 'x'.repeat(1200);

for (const n of sizes) {
  const cache = new PartnerOrderCache({ mode: 'local' }, clock);
  const version = cache.versionOf(scope) as string;
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = `key:${crypto.randomUUID()}:/v1/partner/orders/ORD-${i}`;
    keys.push(key);
    cache.set(key, version, body);
  }
  for (const hot of [9, n]) {
    // Keys as a request would bring them: equal strings, not the very strings stored.
    const asked = keys.slice(0, hot).map((k) => ` ${k}`.slice(1));
    for (let i = 0; i < HITS / 10; i++) cache.get(asked[i % hot], version);
    const started = process.hrtime.bigint();
    for (let i = 0; i < HITS; i++) cache.get(asked[i % hot], version);
    const ns = Number(process.hrtime.bigint() - started) / HITS;
    console.log(`${n} answers cached, ${hot} of them read in turn: ${ns.toFixed(0)} ns a hit`);
  }
}
