/**
 * OpenTelemetry traces over OTLP/HTTP (docs/operating.md, "Traces"), on only when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set. Off, nothing of it runs: the SDK is loaded here by dynamic import
 * only when tracing starts, and the wrappers below (database, Redis, the HTTP hook in
 * plugins/http-tracing.ts, the attempt span in modules/webhooks/delivery/attempt.ts) are installed only when it did.
 *
 * Spans: one per HTTP request (named by method and route pattern, never the URL asked for), one per
 * database statement and per transaction (the statement's text, never its parameters), one per Redis
 * command (its name, never its arguments), one per webhook attempt. A partner event and its deliveries
 * are in different traces (a delivery may be attempted hours later, by another process): each outbox
 * row keeps the context of the transaction that wrote it (`trace_parent`, set by the traced database
 * for its transaction), and each attempt span links to it.
 */
import type { Context, Link, Span, SpanContext, Tracer } from '@opentelemetry/api';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import type { Db, Queryable } from '../db/db.js';

type Api = typeof import('@opentelemetry/api');

export interface Tracing {
  tracer: Tracer;
  api: Api;
  /** The W3C `traceparent` of `span`. */
  traceParent(span: Span): string;
  /** The span context a stored `traceparent` names, or null when it names none. */
  parseTraceParent(value: string | null): SpanContext | null;
  /** The context of an incoming request: its `traceparent` header continued, or a new root. */
  extract(headers: Record<string, string | string[] | undefined>): Context;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

/** One process-wide context manager: OpenTelemetry's context API has one global slot. */
let contextManagerInstalled = false;

export async function startTracing(config: Config): Promise<Tracing | null> {
  const endpoint = config.otlpEndpoint;
  if (endpoint === null) return null;
  const [api, node, exporterModule, resources, core, hooks] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
    import('@opentelemetry/context-async-hooks'),
  ]);
  if (!contextManagerInstalled) {
    api.context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
    contextManagerInstalled = true;
  }
  // OTLP/HTTP with JSON bodies (the exporter's default): no protobuf runtime to load.
  const exporter = new exporterModule.OTLPTraceExporter({ url: `${endpoint}/v1/traces` });
  const provider = new node.NodeTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': 'partner-api' }),
    spanProcessors: [new node.BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000, maxQueueSize: 8_192 })],
  });
  const propagator = new core.W3CTraceContextPropagator();
  const getter = {
    keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
    get: (carrier: Record<string, unknown>, key: string) => carrier[key] as string | string[] | undefined,
  };
  return {
    tracer: provider.getTracer('partner-api'),
    api,
    traceParent(span) {
      const { traceId, spanId, traceFlags } = span.spanContext();
      return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
    },
    parseTraceParent: (value) => (value ? (core.parseTraceParent(value) ?? null) : null),
    extract: (headers) => propagator.extract(api.ROOT_CONTEXT, headers, getter),
    shutdown: () => provider.shutdown(),
  };
}

/** The first word of a statement (`SELECT`, `INSERT`, `WITH` …): the span's name. */
function operationOf(text: string): string {
  const match = /^\s*([A-Za-z]+)/.exec(text);
  return match ? match[1].toUpperCase() : 'SQL';
}

const MAX_STATEMENT_CHARS = 2_000;

/**
 * `db` with a span around each statement and transaction. A transaction first stores its span's context
 * in the transaction-local setting `partner_api.trace_parent`, the default of `outbox.trace_parent`
 * (migration 0022): every event the transaction writes keeps where it came from. On a server the setting
 * is sent with the transaction's first statement, costing no round trip of its own
 * (docs/decisions-log.md, "Pipelined transactions").
 */
export function traceDb(db: Db, tracing: Tracing): Db {
  const { tracer, api } = tracing;
  const statementSpan = <T>(text: string, run: () => Promise<T>): Promise<T> =>
    tracer.startActiveSpan(
      operationOf(text),
      {
        kind: api.SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'postgresql',
          'db.operation.name': operationOf(text),
          'db.query.text': text.length > MAX_STATEMENT_CHARS ? `${text.slice(0, MAX_STATEMENT_CHARS)}…` : text,
        },
      },
      (span) => ended(span, run(), api),
    );
  const tracedQueryable = (q: Queryable): Queryable => ({
    query: (text, params) => statementSpan(text, () => q.query(text, params)),
    ...(q.commit ? { commit: () => statementSpan('COMMIT', () => (q.commit as () => Promise<void>)()) } : {}),
  });
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'query') return tracedQueryable(target).query;
      if (prop === 'tx') {
        return <T>(fn: (q: Queryable) => Promise<T>, options?: Parameters<Db['tx']>[1]) =>
          tracer.startActiveSpan(
            'transaction',
            { kind: api.SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql' } },
            (span) =>
              ended(
                span,
                target.tx(async (q) => {
                  const traced = tracedQueryable(q);
                  const stored = traced.query(`SELECT set_config('partner_api.trace_parent', $1, true)`, [
                    tracing.traceParent(span),
                  ]);
                  if (!q.commit) {
                    await stored;
                    return fn(traced);
                  }
                  // Pipelined (a server): sent ahead of the transaction's first statement and answered with
                  // it, no round trip of its own. Its failure fails every statement behind it, so it is
                  // awaited once they are.
                  stored.catch(() => {});
                  const result = await fn(traced);
                  await stored;
                  return result;
                }, options),
                api,
              ),
          );
      }
      if (prop === 'copyFrom')
        return (copy: string, data: string | readonly Buffer[]) => statementSpan(copy, () => target.copyFrom(copy, data));
      if (prop === 'withTimeout')
        return (timeoutMs: number, options?: { bulk?: boolean }) => traceDb(target.withTimeout(timeoutMs, options), tracing);
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A span around each command this client sends (its name only: arguments hold keys and values). */
export function traceRedis(redis: Redis, tracing: Tracing): void {
  const { tracer, api } = tracing;
  const send = redis.sendCommand;
  redis.sendCommand = function (this: Redis, command, stream) {
    const span = tracer.startSpan(`redis ${command.name}`, {
      kind: api.SpanKind.CLIENT,
      attributes: { 'db.system.name': 'redis', 'db.operation.name': command.name },
    });
    void ended(span, command.promise, api).catch(() => {});
    return send.call(this, command, stream);
  } as Redis['sendCommand'];
}

/** Ends `span` when `work` settles, marking it failed if it rejected; returns `work`. */
export function ended<T>(span: Span, work: Promise<T>, api: Api): Promise<T> {
  return work.then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      span.end();
      throw err;
    },
  );
}

/** The links of an attempt span: to the transaction that wrote its event, when it was traced. */
export function eventLinks(tracing: Tracing, traceParent: string | null): Link[] {
  const context = tracing.parseTraceParent(traceParent);
  return context ? [{ context, attributes: { 'link.kind': 'partner event' } }] : [];
}
