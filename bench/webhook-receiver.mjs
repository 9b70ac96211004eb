// The webhook endpoint of bench/webhook-fanout.ts, run as a child process, as a partner's endpoint is
// another machine's: its work does not share an event loop with the worker that delivers to it. Answers
// every POST 204 at once and notes when it arrived (ms since the epoch with sub-millisecond precision,
// performance.timeOrigin + performance.now(), comparable across processes of one machine), by the
// order code the delivery carries. GET /count answers how many deliveries arrived; GET /receipts the
// arrival times by order code. Prints {"port":N} on its first line once it listens.
import { createServer } from 'node:http';

const receipts = {};
let received = 0;

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.url === '/count' ? received : receipts));
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    res.statusCode = 204;
    res.end();
    try {
      const code = JSON.parse(Buffer.concat(chunks).toString('utf8'))?.data?.order?.code;
      if (typeof code === 'string') {
        receipts[code] ??= [];
        receipts[code].push(at);
      }
    } catch {}
    received++;
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
// The bench closes our stdin when it is done (or dies): leave then.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
