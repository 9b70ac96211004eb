// The webhook endpoint of bench/webhook-fanout.ts, run as a child process, as a partner's endpoint is
// another machine's: its work does not share an event loop with the worker that delivers to it. Answers
// every POST 204 at once and notes when it arrived (ms since the epoch with sub-millisecond precision,
// performance.timeOrigin + performance.now(), comparable across processes of one machine), by the
// order code the delivery carries. GET /count?atLeast=N answers, once N deliveries have arrived (at
// once if they have), { received, at }: how many, and when the N-th arrived (null for N = 0);
// GET /receipts the arrival times by order code. Prints {"port":N} on its first line once it listens.
import { createServer } from 'node:http';

const now = () => performance.timeOrigin + performance.now();
const receipts = {};
/** Arrival time of each delivery, in order. */
const arrivals = [];
/** Requests for a count not reached yet: { atLeast, answer }. */
let waiting = [];

const countAnswer = (atLeast) => JSON.stringify({ received: arrivals.length, at: atLeast > 0 ? arrivals[atLeast - 1] : null });

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.setHeader('content-type', 'application/json');
    const url = new URL(req.url, 'http://receiver');
    if (url.pathname === '/receipts') return res.end(JSON.stringify(receipts));
    const atLeast = Number(url.searchParams.get('atLeast') ?? 0);
    if (arrivals.length >= atLeast) return res.end(countAnswer(atLeast));
    waiting.push({ atLeast, answer: () => res.end(countAnswer(atLeast)) });
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = now();
    res.statusCode = 204;
    res.end();
    arrivals.push(at);
    try {
      const code = JSON.parse(Buffer.concat(chunks).toString('utf8'))?.data?.order?.code;
      if (typeof code === 'string') {
        receipts[code] ??= [];
        receipts[code].push(at);
      }
    } catch {}
    const done = waiting.filter((w) => arrivals.length >= w.atLeast);
    if (done.length > 0) {
      waiting = waiting.filter((w) => arrivals.length < w.atLeast);
      for (const w of done) w.answer();
    }
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
// The bench closes our stdin when it is done (or dies): leave then.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
