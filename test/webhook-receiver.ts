/**
 * A real local HTTP endpoint for webhook tests. It records every request (method, path, headers, the
 * raw body exactly as received) and answers as programmed per path: a status, a delay, a redirect, or
 * a hang (no answer until `releaseHung()` or `close()`). It also tracks how many requests each path
 * has in flight at once (per-endpoint concurrency tests).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAtMs: number;
}

export interface ReceiverReply {
  status?: number;
  /** Answer only after this many (real) milliseconds. */
  delayMs?: number;
  /** Never answer (until releaseHung or close). */
  hang?: boolean;
  /** Answer 302 with this Location. */
  redirectTo?: string;
  body?: string;
}

export type Responder = (request: ReceivedRequest, indexOnPath: number) => ReceiverReply;

interface Hung {
  path: string;
  res: ServerResponse;
  done: () => void;
}

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly responders = new Map<string, Responder>();
  private readonly inFlight = new Map<string, number>();
  private readonly maxInFlight = new Map<string, number>();
  private readonly hung: Hung[] = [];
  private readonly sockets = new Set<Socket>();
  /** TCP connections accepted so far (an SSRF guard must refuse before connecting). */
  connections = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | null = null;
    const server = createServer((req, res) => void receiver?.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new WebhookReceiver(server, (server.address() as AddressInfo).port);
    server.on('connection', (socket) => {
      if (receiver) receiver.connections++;
      receiver?.sockets.add(socket);
      socket.on('close', () => receiver?.sockets.delete(socket));
    });
    return receiver;
  }

  /** The URL of one endpoint on this receiver. */
  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** How `path` answers from now on (default: 200). */
  on(path: string, reply: ReceiverReply | Responder): this {
    this.responders.set(path, typeof reply === 'function' ? reply : () => reply);
    return this;
  }

  requestsTo(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  inFlightOn(path: string): number {
    return this.inFlight.get(path) ?? 0;
  }

  maxInFlightOn(path: string): number {
    return this.maxInFlight.get(path) ?? 0;
  }

  hungCount(path?: string): number {
    return this.hung.filter((h) => path === undefined || h.path === path).length;
  }

  /** Answers every hanging request (of `path`, or all) with `status`. */
  releaseHung(status = 200, path?: string): void {
    for (const h of [...this.hung]) {
      if (path !== undefined && h.path !== path) continue;
      this.hung.splice(this.hung.indexOf(h), 1);
      h.res.writeHead(status).end();
      h.done();
    }
  }

  async close(): Promise<void> {
    for (const h of this.hung.splice(0)) h.res.destroy();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '/').split('?')[0];
    const received: ReceivedRequest = {
      method: req.method ?? '',
      path,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      receivedAtMs: Date.now(),
    };
    const index = this.requestsTo(path).length;
    this.requests.push(received);
    const now = (this.inFlight.get(path) ?? 0) + 1;
    this.inFlight.set(path, now);
    this.maxInFlight.set(path, Math.max(now, this.maxInFlight.get(path) ?? 0));
    const done = () => this.inFlight.set(path, (this.inFlight.get(path) ?? 1) - 1);
    res.on('close', () => {
      // A request the client gave up on (timeout) also stops being in flight.
      const i = this.hung.findIndex((h) => h.res === res);
      if (i >= 0) {
        this.hung.splice(i, 1);
        done();
      }
    });

    const responder: Responder = this.responders.get(path) ?? (() => ({ status: 200 }));
    const reply = responder(received, index);
    if (reply.hang) {
      this.hung.push({ path, res, done });
      return;
    }
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.redirectTo) {
      res.writeHead(302, { location: reply.redirectTo }).end();
    } else {
      res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain' }).end(reply.body ?? 'ok');
    }
    done();
  }
}
