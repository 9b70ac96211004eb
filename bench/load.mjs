// Load generator, run as a child process by bench/run.ts so that it does not share the server's event
// loop. Reads one scenario as JSON from argv[2], prints autocannon's result as JSON on stdout.
//   { url, connections, duration, method?, headers?, body?, paths?: string[], cycle?: { codes, steps } }
import autocannon from 'autocannon';

const scenario = JSON.parse(process.argv[2]);
const options = {
  url: scenario.url,
  connections: scenario.connections,
  duration: scenario.duration,
  headers: scenario.headers ?? {},
};

if (scenario.paths) {
  // Rotate through many paths (e.g. different order codes) so caches cannot serve a single row.
  let i = 0;
  options.requests = [
    {
      method: 'GET',
      setupRequest: (req) => ({ ...req, path: scenario.paths[i++ % scenario.paths.length] }),
    },
  ];
} else if (scenario.cycle) {
  // A sequence of requests on one order per connection; each new cycle takes the next order.
  let next = 0;
  const { codes, steps } = scenario.cycle;
  options.requests = steps.map((step, index) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(scenario.headers ?? {}) },
    setupRequest: (req, context) => {
      if (index === 0) {
        if (next >= codes.length) return null;
        context.code = codes[next++];
      }
      return { ...req, path: `/v1/partner/orders/${context.code}/events`, body: JSON.stringify(step) };
    },
  }));
  options.amount = codes.length * steps.length;
  delete options.duration;
} else {
  options.method = scenario.method ?? 'GET';
  if (scenario.body) options.body = JSON.stringify(scenario.body);
}

const started = performance.now();
let lastResponse = started;
const instance = autocannon(options);
instance.on('response', () => {
  lastResponse = performance.now();
});
const result = await instance;
// autocannon counts its own `duration` in whole ticks, and a run bounded by a request count (the event
// cycles) only ends on its next one-second tick (9,000 events done in 6.2 s end at 7.0 s): time the run
// from the start to the last response, here.
const seconds = (lastResponse - started) / 1000;
process.stdout.write(
  JSON.stringify({
    requests: result.requests.total / seconds,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    duration: seconds,
  }),
);
