/**
 * What a hit of the partner read cache costs in itself (docs/performance.md, "Partner reads"): a cache
 * filled with N answers of 1.2 KB, then hits on a few of them again and again (a partner polling its
 * page in a big cache) and on all of them in rotation; then a full cache, where every tenth read is a
 * new answer that must evict one. No HTTP, no database: the figures hold on a busy machine, where the
 * throughput of a route would be noise.
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

// A full cache: nine answers read again and again, every tenth operation a new answer stored (a miss).
{
  const n = sizes[sizes.length - 1];
  const cache = new PartnerOrderCache({ mode: 'local' }, clock, n * (1200 + 64 + 80));
  const version = cache.versionOf(scope) as string;
  let stored = 0;
  const store = () => {
    const key = `key:${scope.keyId}:/v1/partner/orders/ORD-${stored++}`;
    cache.set(key, version, body);
    return key;
  };
  const hot: string[] = [];
  while (stored < n * 1.2) hot.push(store());
  hot.splice(0, hot.length - 9);
  const started = process.hrtime.bigint();
  for (let i = 0; i < HITS; i++) {
    if (i % 10 === 0) store();
    else if (cache.get(hot[i % 9], version) === undefined) cache.set(hot[i % 9], version, body);
  }
  const ns = Number(process.hrtime.bigint() - started) / HITS;
  console.log(
    `full cache of about ${n} answers, 9 read in turn, every tenth operation a new one: ${ns.toFixed(0)} ns an operation`,
  );
}
