/**
 * Traces against a local OTLP/HTTP receiver (JSON, as the exporter sends it): a partner event's request
 * span with its database spans below it, and the webhook attempt that delivered it linked to the
 * transaction that wrote the event.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbThroughProxy } from '../../test/database-per-file.js';
import { createKey, createPartner, createUser, type TestKey } from '../../test/factories.js';
import { createTestApp, type TestApp } from '../../test/harness.js';
import { waitFor } from '../../test/wait.js';
import { WebhookReceiver } from '../../test/webhook-receiver.js';
import { orderFor } from '../modules/orders/orders.test-helpers.js';
import { createWebhookVia, devAuth } from '../modules/webhooks/webhooks.test-helpers.js';
import { startWorker, type Worker } from '../worker/worker.js';
import { type Tracing, traceDb } from './tracing.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  links?: Array<{ traceId: string; spanId: string }>;
  attributes?: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}

/** An OTLP/HTTP trace receiver: POST /v1/traces with an ExportTraceServiceRequest in JSON. */
class OtlpReceiver {
  readonly spans: OtlpSpan[] = [];
  readonly requests: Array<{ path: string; contentType: string | undefined }> = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver.requests.push({ path: req.url ?? '', contentType: req.headers['content-type'] });
        if (req.method === 'POST' && req.url === '/v1/traces') {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
          };
          for (const r of body.resourceSpans) for (const s of r.scopeSpans) receiver.spans.push(...s.spans);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

const attribute = (span: OtlpSpan, key: string) => span.attributes?.find((a) => a.key === key)?.value;

describe('traces (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  let otlp: OtlpReceiver;
  let hooks: WebhookReceiver;
  let t: TestApp;
  let worker: Worker;
  let key: TestKey;
  let code: string;
  let hookPath: string;

  beforeAll(async () => {
    otlp = await OtlpReceiver.start();
    hooks = await WebhookReceiver.start();
    t = await createTestApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } });
    worker = startWorker(t.ctx, { pollIntervalMs: 50 });
    const partner = await createPartner(t.ctx);
    key = await createKey(t.ctx, partner.id);
    const admin = (await createUser(t.ctx, 'ADMIN')).auth;
    code = await orderFor(t, admin, key.id, 'PACKED');
    hookPath = `/traced-${partner.id}`;
    await createWebhookVia(t, await devAuth(t, partner), {
      apiKeyId: key.id,
      url: hooks.url(hookPath),
      events: ['order.status_changed'],
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    await hooks?.close();
    await otlp?.close();
  });

  it("sends a partner event's span tree, and links its delivery's attempt to the event", async () => {
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/partner/orders/${code}/events`,
      headers: key.headers,
      payload: { type: 'PICKED_UP' },
    });
    expect(res.statusCode, res.body).toBe(201);
    // This event's delivery (PICKED_UP moves the order to SCANNED_TO_VAN): the order's earlier changes (made before the webhook existed) may be fanned
    // out to it too, when the worker reaches them after the webhook was created.
    type Envelope = { id: string; data: { order: { status: string } } };
    const delivered = (await waitFor(() =>
      hooks
        .requestsTo(hookPath)
        .map((r) => JSON.parse(r.body) as Envelope)
        .find((e) => e.data.order.status === 'SCANNED_TO_VAN'),
    )) as Envelope;
    const eventId = delivered.id;

    const attempt = (await waitFor(
      () => otlp.spans.find((s) => s.name === 'webhook attempt' && attribute(s, 'partner_api.event_id')?.stringValue === eventId),
      20_000,
    )) as OtlpSpan;
    expect(otlp.requests.every((r) => r.path === '/v1/traces' && r.contentType === 'application/json')).toBe(true);

    // The request: a server span named by its route pattern (no order code), the root of its trace.
    const request = otlp.spans.find((s) => s.name === 'POST /v1/partner/orders/:code/events') as OtlpSpan;
    expect(request).toBeDefined();
    expect(request.kind).toBe(2); // SERVER
    expect(request.parentSpanId ?? '').toBe('');
    expect(attribute(request, 'http.route')?.stringValue).toBe('/v1/partner/orders/:code/events');
    expect(Number(attribute(request, 'http.response.status_code')?.intValue)).toBe(201);
    expect(JSON.stringify(otlp.spans)).not.toContain(code);

    // Below it: the database work it caused, every span's parent in the same trace.
    const inTrace = otlp.spans.filter((s) => s.traceId === request.traceId);
    const ids = new Set(inTrace.map((s) => s.spanId));
    for (const s of inTrace) if (s !== request) expect(ids.has(s.parentSpanId ?? ''), s.name).toBe(true);
    const dbSpans = inTrace.filter((s) => attribute(s, 'db.system.name')?.stringValue === 'postgresql');
    expect(dbSpans.length).toBeGreaterThan(0);
    const transaction = dbSpans.find((s) => s.name === 'transaction') as OtlpSpan;
    expect(transaction).toBeDefined();
    expect(
      dbSpans.some(
        // The group's one write statement (order, timeline, outbox and payment intent rows; its text is
        // cut at 2,000 characters in the span, so it is told by its opening, not by the word outbox).
        (s) => s.parentSpanId === transaction.spanId && /^WITH input AS/.test(attribute(s, 'db.query.text')?.stringValue ?? ''),
      ),
    ).toBe(true);

    // The attempt: its own trace (it may run hours later, elsewhere), linked to the transaction that wrote the event.
    expect(attempt.traceId).not.toBe(request.traceId);
    expect(attempt.links).toEqual([expect.objectContaining({ traceId: request.traceId, spanId: transaction.spanId })]);
    expect(attribute(attempt, 'partner_api.event_type')?.stringValue).toBe('order.status_changed');
  }, 40_000);

  it.skipIf(!process.env.DATABASE_URL)(
    "sends a transaction's trace context with its first statement on a server (no round trip of its own)",
    async () => {
      // Through a proxy that holds what the client sends from the transaction's start: the setting and
      // the first statement both reach it before anything is answered.
      const url = process.env.DATABASE_URL as string;
      const proxied = await dbThroughProxy(url);
      const { proxy } = proxied;
      const traced = traceDb(proxied.db, t.ctx.tracing as Tracing);
      try {
        await traced.query('SELECT 1'); // the connection is open before the proxy holds anything
        proxy.blackhole();
        const answer = await traced.tx(async (q) => {
          const first = q.query<{ m: string }>(`SELECT 'first statement' AS m`);
          try {
            await waitFor(() => proxy.heldToTarget.includes('trace_parent') && proxy.heldToTarget.includes('first statement'), {
              timeoutMs: 5_000,
              what: 'the first statement sent while the trace context is unanswered',
            });
          } finally {
            proxy.pass();
          }
          return (await first)[0].m;
        });
        expect(answer).toBe('first statement');
      } finally {
        await proxied.close();
      }
    },
    30_000,
  );

  it('traces Redis commands when Redis is configured', async () => {
    if (!t.ctx.redis) return;
    await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
    const redis = await waitFor(() => otlp.spans.find((s) => attribute(s, 'db.system.name')?.stringValue === 'redis'), 20_000);
    expect((redis as OtlpSpan).name).toMatch(/^redis [a-z]+$/);
  }, 30_000);
});

describe('traces off (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('loads no tracer and wraps nothing', async () => {
    expect(t.ctx.config.otlpEndpoint).toBeNull();
    expect(t.ctx.tracing).toBeNull();
    expect(t.live.hasPlugin('http-tracing')).toBe(false);
    const [row] = await t.ctx.db.query<{ d: string | null }>(
      `SELECT NULLIF(current_setting('partner_api.trace_parent', true), '') AS d`,
    );
    expect(row.d).toBeNull();
  });
});
