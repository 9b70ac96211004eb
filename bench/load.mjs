// Load generator, run as a child process by bench/run.ts so that it does not share the server's event
// loop. Reads one scenario as JSON from argv[2], prints autocannon's result as JSON on stdout.
//   { url, connections, duration, method?, headers?, body?, paths?: string[], apiKeys?: string[],
//     cycle?: { codes, steps, pathTemplate? }, create?: { body, apiKeyId } }
//  - paths: each request takes the next path (and the next of apiKeys as x-api-key, when given);
//  - cycle: a sequence of POSTs on one order per connection (pathTemplate, `{code}` replaced; partner
//    events by default; a step of null is sent without a body), each new cycle taking the next code;
//    the run ends when the codes are used; `idempotencyKeys: true` gives every request a fresh
//    Idempotency-Key;
//  - create: POST /v1/admin/orders with `body`, then POST …/{code}/assign to `apiKeyId`, again and
//    again; prints the codes it created (`codes`).
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

// The scenario as JSON, or `@file` holding it.
const scenario = JSON.parse(process.argv[2].startsWith('@') ? readFileSync(process.argv[2].slice(1), 'utf8') : process.argv[2]);
const options = {
  url: scenario.url,
  connections: scenario.connections,
  duration: scenario.duration,
  headers: scenario.headers ?? {},
};

const created = [];
if (scenario.paths) {
  // Rotate through many paths (e.g. different order codes) so caches cannot serve a single row, and
  // through many keys when given.
  let i = 0;
  let k = 0;
  const keys = scenario.apiKeys;
  const body = scenario.body === undefined ? undefined : JSON.stringify(scenario.body);
  options.requests = [
    {
      method: scenario.method ?? 'GET',
      ...(body === undefined ? {} : { body }),
      setupRequest: (req) => ({
        ...req,
        path: scenario.paths[i++ % scenario.paths.length],
        ...(keys ? { headers: { ...req.headers, 'x-api-key': keys[k++ % keys.length] } } : {}),
      }),
    },
  ];
  if (body !== undefined) options.headers = { 'content-type': 'application/json', ...options.headers };
} else if (scenario.cycle) {
  // A sequence of requests on one order per connection; each new cycle takes the next order.
  let next = 0;
  const run = `bench-${process.pid}-${Date.now()}`;
  const { steps } = scenario.cycle;
  // autocannon shares `amount` equally among connections: each must run whole cycles, so the codes
  // are cut to a multiple of the connections (otherwise a connection would run out mid-way).
  const codes = scenario.cycle.codes.slice(
    0,
    Math.floor(scenario.cycle.codes.length / scenario.connections) * scenario.connections,
  );
  const template = scenario.cycle.pathTemplate ?? '/v1/partner/orders/{code}/events';
  // A step of null is a POST without a body (an offer's accept).
  options.requests = steps.map((step, index) => ({
    method: 'POST',
    headers:
      step === null ? { ...(scenario.headers ?? {}) } : { 'content-type': 'application/json', ...(scenario.headers ?? {}) },
    setupRequest: (req, context) => {
      if (index === 0) {
        if (next >= codes.length) return null;
        context.code = codes[next++];
      }
      const path = template.replace('{code}', context.code);
      const keyed = scenario.cycle.idempotencyKeys
        ? { ...req, path, headers: { ...req.headers, 'idempotency-key': `${run}-${context.code}-${index}` } }
        : { ...req, path };
      return step === null ? keyed : { ...keyed, body: JSON.stringify(step) };
    },
  }));
  options.amount = codes.length * steps.length;
  delete options.duration;
} else if (scenario.create) {
  // An operator placing orders: create, then assign the order it got back.
  const headers = { 'content-type': 'application/json', ...(scenario.headers ?? {}) };
  const body = JSON.stringify(scenario.create.body);
  const assign = JSON.stringify({ apiKeyId: scenario.create.apiKeyId });
  options.requests = [
    {
      method: 'POST',
      path: '/v1/admin/orders',
      headers,
      body,
      onResponse: (status, responseBody, context) => {
        context.code = status === 201 ? JSON.parse(responseBody).code : null;
        if (context.code) created.push(context.code);
      },
    },
    {
      method: 'POST',
      headers,
      setupRequest: (req, context) =>
        context.code ? { ...req, path: `/v1/admin/orders/${context.code}/assign`, body: assign } : null,
    },
  ];
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
    ...(scenario.create ? { codes: created } : {}),
  }),
);
