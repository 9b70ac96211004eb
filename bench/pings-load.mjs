// Load generator of bench/pings.ts, run as a child process (its own event loop). Reads the scenario as
// JSON from argv[2]: { url, connections, duration, codes, apiKeys, points }. Each request sends `points`
// locations of the next order (round robin), their times ending now, 1 ms apart, so every point is newer
// than the order's latest (its previous request was at least a few ms earlier). Prints autocannon's result as JSON.
import autocannon from 'autocannon';

const s = JSON.parse(process.argv[2]);
let i = 0;
const result = await autocannon({
  url: s.url,
  connections: s.connections,
  duration: s.duration,
  headers: { 'content-type': 'application/json' },
  requests: [
    {
      method: 'POST',
      setupRequest: (req) => {
        const n = i++ % s.codes.length;
        const now = Date.now();
        const points = Array.from({ length: s.points }, (_, p) => ({
          lat: 40.37 + ((now / 1000) % 10) * 0.0001,
          lng: 49.84 + p * 0.0001,
          accuracyM: 8,
          at: new Date(now - (s.points - 1 - p)).toISOString(),
        }));
        return {
          ...req,
          path: `/v1/partner/orders/${s.codes[n]}/locations`,
          headers: { ...req.headers, 'x-api-key': s.apiKeys[n] },
          body: JSON.stringify({ points, etaAt: new Date(now + 600_000).toISOString() }),
        };
      },
    },
  ],
});
process.stdout.write(
  JSON.stringify({ requests: result.requests, latency: result.latency, non2xx: result.non2xx, errors: result.errors }),
);
