/**
 * A fault-injecting TCP proxy for tests, in the manner of Toxiproxy (whose server we cannot install):
 * it listens on a port the system chooses and forwards every connection to a target (PostgreSQL, Redis),
 * and on demand it
 *  - passes traffic (the default),
 *  - refuses new connections (each is accepted and reset at once: the client sees ECONNRESET),
 *  - resets every open connection (both sides get a TCP RST, as when a server process dies),
 *  - blackholes: open and new connections stay up but nothing is forwarded either way; the bytes are
 *    held, as a network partition holds them, and delivered in order when traffic passes again. A
 *    connection one side closes while it is held is reset on the other side (its held bytes are dropped:
 *    the side that gave up would never have had them delivered).
 * `down()` is refuse + reset, what a stopped server looks like.
 */
import { createServer, type Server, Socket } from 'node:net';

type Mode = 'pass' | 'refuse' | 'blackhole';

interface Link {
  client: Socket;
  upstream: Socket | null;
  /** Bytes held while blackholed, per direction. */
  toUpstream: Buffer[];
  toClient: Buffer[];
  clientEnded: boolean;
  upstreamEnded: boolean;
}

export class FaultProxy {
  private mode: Mode = 'pass';
  private readonly links = new Set<Link>();
  /** Connections accepted so far (refused ones included). */
  accepted = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<FaultProxy> {
    let proxy: FaultProxy | null = null;
    const server = createServer({ noDelay: true }, (socket) => proxy?.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (!address || typeof address !== 'object') throw new Error('proxy has no port');
    proxy = new FaultProxy(server, address.port, target);
    return proxy;
  }

  /** A proxy in front of the host and port of `url` (postgres://…, redis://…). */
  static async startFor(url: string): Promise<FaultProxy> {
    const parsed = new URL(url);
    const defaultPort = parsed.protocol.startsWith('redis') ? 6379 : 5432;
    return FaultProxy.start({ host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || defaultPort) });
  }

  /** `url` with its host and port replaced by this proxy's. */
  url(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  /** Connections open through the proxy now. */
  get openConnections(): number {
    return this.links.size;
  }

  /** What a blackhole holds on its way to the target, over every open connection (latin1 text). */
  get heldToTarget(): string {
    return [...this.links].map((link) => Buffer.concat(link.toUpstream).toString('latin1')).join('');
  }

  /** Traffic flows; what a blackhole held is delivered, in order. */
  pass(): void {
    this.mode = 'pass';
    for (const link of [...this.links]) {
      if (!link.upstream) this.connectUpstream(link);
      else this.flush(link);
    }
  }

  /** New connections are reset as soon as they are accepted; open ones are left alone. */
  refuse(): void {
    this.mode = 'refuse';
  }

  /** Every open connection is reset, on both sides. The mode does not change. */
  resetAll(): void {
    for (const link of [...this.links]) this.reset(link);
  }

  /** Nothing is forwarded, on open and new connections alike, until `pass()`. */
  blackhole(): void {
    this.mode = 'blackhole';
  }

  /** A stopped server: refuse new connections and reset the open ones. */
  down(): void {
    this.refuse();
    this.resetAll();
  }

  async close(): Promise<void> {
    this.mode = 'refuse';
    this.resetAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.accepted++;
    client.on('error', () => {});
    if (this.mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const link: Link = { client, upstream: null, toUpstream: [], toClient: [], clientEnded: false, upstreamEnded: false };
    this.links.add(link);
    client.on('data', (chunk: Buffer) => {
      if (this.mode === 'blackhole' || !link.upstream || link.upstream.connecting) link.toUpstream.push(chunk);
      else link.upstream.write(chunk);
    });
    client.on('end', () => {
      link.clientEnded = true;
      if (this.mode !== 'blackhole' && link.upstream && !link.upstream.connecting && link.toUpstream.length === 0) {
        link.upstream.end();
      }
    });
    client.on('close', () => {
      // The client gave up: while held, its bytes are dropped and the server side is reset.
      if (this.mode === 'blackhole' || link.toUpstream.length > 0) this.reset(link);
      else if (link.upstream && !link.clientEnded) link.upstream.destroy();
      this.links.delete(link);
    });
    if (this.mode === 'pass') this.connectUpstream(link);
  }

  private connectUpstream(link: Link): void {
    const upstream = new Socket();
    link.upstream = upstream;
    upstream.setNoDelay(true);
    upstream.on('error', () => {});
    upstream.on('data', (chunk: Buffer) => {
      if (this.mode === 'blackhole') link.toClient.push(chunk);
      else link.client.write(chunk);
    });
    upstream.on('end', () => {
      link.upstreamEnded = true;
      if (this.mode !== 'blackhole' && link.toClient.length === 0) link.client.end();
    });
    upstream.on('close', () => {
      if (this.mode === 'blackhole') this.reset(link);
      else if (!link.upstreamEnded) link.client.destroy();
      this.links.delete(link);
    });
    upstream.connect(this.target.port, this.target.host, () => {
      if (this.mode !== 'blackhole') this.flush(link);
    });
  }

  private flush(link: Link): void {
    const { upstream, client } = link;
    if (!upstream || upstream.connecting) return;
    for (const chunk of link.toUpstream.splice(0)) upstream.write(chunk);
    for (const chunk of link.toClient.splice(0)) client.write(chunk);
    if (link.clientEnded) upstream.end();
    if (link.upstreamEnded) client.end();
  }

  private reset(link: Link): void {
    link.toUpstream.length = 0;
    link.toClient.length = 0;
    this.links.delete(link);
    if (!link.client.destroyed) link.client.resetAndDestroy();
    if (link.upstream && !link.upstream.destroyed) link.upstream.resetAndDestroy();
  }
}
