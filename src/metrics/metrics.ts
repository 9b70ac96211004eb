/**
 * This process's Prometheus metrics (docs/operating.md, "Metrics"): one registry per process, read by
 * its own `/metrics` listener (metrics-server.ts). Every series and label is listed in that section.
 *
 * Labels hold only names of our own choosing: the listener, a route's pattern (`/v1/partner/orders/:code`,
 * never the URL asked for), a method, a status class, an outcome, a dependency's name. Nothing a caller
 * sends (an API key, a phone number, an order code) and no webhook URL can become a label.
 *
 * What is counted on the request path is two in-memory updates per request (plugins/http-metrics.ts).
 * Everything that needs a query (the queue's depth and oldest due age, the outbox lag) is read when
 * Prometheus scrapes, at most once every QUERY_TTL_MS however often it scrapes.
 */
import client from 'prom-client';
import type { DependencyHealth } from '../dependencies.js';

/** Gauges read from the database are kept this long between scrapes. */
export const QUERY_TTL_MS = 5_000;

const PREFIX = 'partner_api_';

export interface QueueStats {
  /** Deliveries waiting for an attempt (PENDING or FAILED). */
  depth: number;
  /** Seconds since the oldest due delivery became due (0 when none is due). */
  oldestDueAgeSec: number;
  /** Seconds since the oldest outbox row not yet fanned out was written (0 when none waits). */
  outboxLagSec: number;
}

export type DeliveryOutcome = 'delivered' | 'failed' | 'dead' | 'superseded';

/** What handing a one-time code to the SMS gateway led to. */
export type SmsOutcome = 'sent' | 'failed';

/**
 * prom-client's default series left out: gauges whose names end in `_total`, which Prometheus's naming
 * rules keep for counters (`promtool check metrics` flags them). Each is the sum of a labelled gauge that
 * stays (`nodejs_active_handles` by type, …), so `sum(nodejs_active_handles)` gives the same figure.
 */
export const LEFT_OUT_DEFAULT_SERIES = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;

/** `200` → `2xx`; a status below 100 or above 599 cannot happen in Fastify. */
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

interface RequestSeries {
  labels: Record<'listener' | 'route' | 'method' | 'status_class', string>;
  /** Requests counted here, handed to the counter when scraped (`counted` of them already). */
  count: number;
  counted: number;
  duration: client.Histogram.Internal<string>;
}

export class Metrics {
  readonly registry = new client.Registry();
  private readonly httpDuration: client.Histogram<string>;
  private readonly rateLimited: client.Counter<string>;
  private readonly deliveries: client.Counter<string>;
  private readonly attemptDuration: client.Histogram<string>;
  private readonly outages: client.Counter<string>;
  private readonly smsSends: client.Counter<string>;
  private readonly offers: client.Counter<string>;
  private readonly offerDecision: client.Histogram<string>;
  /** The request series of each (listener, route, method, status class) met so far. */
  private readonly series = new Map<string, RequestSeries>();
  private readonly dependencies: DependencyHealth[] = [];
  private requestLog: { queued: number; droppedTotal: number } | null = null;
  private requestLogDropsSeen = 0;
  private realtime: (() => number) | null = null;
  private queueGaugesRegistered = false;
  private queue: {
    read: () => Promise<QueueStats>;
    last: QueueStats | null;
    atMs: number;
    pending: Promise<void> | null;
  } | null = null;

  constructor() {
    const registers = [this.registry];
    const self = this;
    client.collectDefaultMetrics({ register: this.registry });
    for (const name of LEFT_OUT_DEFAULT_SERIES) this.registry.removeSingleMetric(name);
    new client.Counter({
      name: `${PREFIX}http_requests_total`,
      help: 'HTTP requests answered, by listener, route pattern, method and status class',
      labelNames: ['listener', 'route', 'method', 'status_class'],
      registers,
      // Counted in plain numbers per series on the request path, handed over when scraped.
      collect() {
        for (const series of self.series.values()) {
          if (series.count === series.counted) continue;
          this.inc(series.labels, series.count - series.counted);
          series.counted = series.count;
        }
      },
    });
    this.httpDuration = new client.Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'Time from a request arriving to its answer being sent, by listener, route pattern, method and status class',
      labelNames: ['listener', 'route', 'method', 'status_class'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.rateLimited = new client.Counter({
      name: `${PREFIX}rate_limited_requests_total`,
      help: 'Partner API requests refused by the rate limiter (429 ERR_RATE_LIMITED), by listener',
      labelNames: ['listener'],
      registers,
    });
    this.deliveries = new client.Counter({
      name: `${PREFIX}webhook_deliveries_total`,
      help: 'Webhook delivery attempts by what they led to: delivered, failed (retried later), dead (no retry left), superseded (the lease was lost meanwhile)',
      labelNames: ['outcome'],
      registers,
    });
    this.attemptDuration = new client.Histogram({
      name: `${PREFIX}webhook_attempt_duration_seconds`,
      help: "Webhook attempts' time from sending to the endpoint's answer, by the answer's status class (error: no answer)",
      labelNames: ['status_class'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.outages = new client.Counter({
      name: `${PREFIX}dependency_outages_total`,
      help: 'Outages of a dependency seen by this process (each counted once, when it starts)',
      labelNames: ['dependency'],
      registers,
    });
    this.smsSends = new client.Counter({
      name: `${PREFIX}sms_sends_total`,
      help: 'One-time codes handed to the SMS gateway, by gateway (twilio, http, log) and outcome (sent, failed)',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    new client.Gauge({
      name: `${PREFIX}dependency_up`,
      help: 'Whether a dependency answers, as this process last saw it (1 up, 0 down)',
      labelNames: ['dependency'],
      registers,
      collect() {
        for (const health of self.dependencies) this.set({ dependency: health.name }, health.available ? 1 : 0);
      },
    });
    // Offers (docs/offers.md): by outcome only, never by partner or key.
    this.offers = new client.Counter({
      name: `${PREFIX}offers_total`,
      help: 'Offers that left PENDING, by outcome (accepted, declined, expired, withdrawn)',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of ['accepted', 'declined', 'expired', 'withdrawn']) this.offers.inc({ outcome }, 0);
    this.offerDecision = new client.Histogram({
      name: `${PREFIX}offer_decision_seconds`,
      help: 'Time from an offer to its acceptance or decline',
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 14400, 86400],
      registers,
    });
    new client.Gauge({
      name: `${PREFIX}request_log_queue_length`,
      help: 'Request log entries waiting to be written',
      registers,
      collect() {
        if (self.requestLog) this.set(self.requestLog.queued);
      },
    });
    new client.Counter({
      name: `${PREFIX}request_log_dropped_total`,
      help: 'Request log entries left out (queue full under overload, or refused by the database)',
      registers,
      collect() {
        if (!self.requestLog) return;
        const total = self.requestLog.droppedTotal;
        if (total > self.requestLogDropsSeen) this.inc(total - self.requestLogDropsSeen);
        self.requestLogDropsSeen = total;
      },
    });
    new client.Gauge({
      name: `${PREFIX}realtime_connections`,
      help: 'Realtime (Socket.IO) connections open on this process',
      registers,
      collect() {
        if (self.realtime) this.set(self.realtime());
      },
    });
  }

  /** The queue's gauges, registered by the first process part that works the queue (a worker). */
  private registerQueueGauges(): void {
    if (this.queueGaugesRegistered) return;
    this.queueGaugesRegistered = true;
    const self = this;
    const queueGauge = (name: string, help: string, pick: (s: QueueStats) => number) =>
      new client.Gauge({
        name: `${PREFIX}${name}`,
        help,
        registers: [this.registry],
        async collect() {
          const stats = await self.queueStats();
          if (stats) this.set(pick(stats));
        },
      });
    queueGauge(
      'webhook_queue_depth',
      'Webhook deliveries waiting for an attempt (pending or failed and retried later)',
      (s) => s.depth,
    );
    queueGauge(
      'webhook_oldest_due_age_seconds',
      'How long the oldest due webhook delivery has been due',
      (s) => s.oldestDueAgeSec,
    );
    queueGauge('outbox_lag_seconds', 'Age of the oldest event not yet fanned out to webhook deliveries', (s) => s.outboxLagSec);
  }

  /** Counts one answered request (plugins/http-metrics.ts). `route` is the pattern, or undefined when none matched. */
  observeRequest(listener: string, route: string | undefined, method: string, statusCode: number, elapsedMs: number): void {
    const statusClass = STATUS_CLASSES[Math.floor(statusCode / 100) - 1] ?? 'other';
    const key = `${listener} ${method} ${statusClass} ${route ?? ''}`;
    let series = this.series.get(key);
    if (!series) {
      const labels = { listener, route: route ?? '(unmatched)', method, status_class: statusClass };
      series = { labels, count: 0, counted: 0, duration: this.httpDuration.labels(labels) };
      this.series.set(key, series);
    }
    series.count++;
    series.duration.observe(elapsedMs / 1000);
  }

  rateLimitedRequest(listener: string): void {
    this.rateLimited.inc({ listener });
  }

  /** One webhook attempt: its status (null: no answer), how long it took, and what it led to. */
  observeAttempt(statusCode: number | null, durationMs: number, outcome: DeliveryOutcome): void {
    const statusClass = statusCode === null ? 'error' : (STATUS_CLASSES[Math.floor(statusCode / 100) - 1] ?? 'other');
    this.attemptDuration.observe({ status_class: statusClass }, durationMs / 1000);
    this.deliveries.inc({ outcome });
  }

  /** One one-time code handed to the gateway `provider` (its kind, never the phone number): sent or failed. */
  observeSmsSend(provider: string, outcome: SmsOutcome): void {
    this.smsSends.inc({ provider, outcome });
  }

  /** An offer left PENDING; `decisionSeconds` for an acceptance or a decline. */
  offerClosed(outcome: 'accepted' | 'declined' | 'expired' | 'withdrawn', decisionSeconds: number | null): void {
    this.offers.inc({ outcome });
    if (decisionSeconds !== null) this.offerDecision.observe(decisionSeconds);
  }

  /** Reports `health`'s state and counts its outages from now on. */
  trackDependency(health: DependencyHealth): () => void {
    this.dependencies.push(health);
    this.outages.inc({ dependency: health.name }, 0);
    return health.onChange((change) => {
      if (!change.available) this.outages.inc({ dependency: health.name });
    });
  }

  trackRequestLog(recorder: { queued: number; droppedTotal: number }): void {
    this.requestLog = recorder;
    this.requestLogDropsSeen = recorder.droppedTotal;
  }

  trackRealtime(connections: () => number): () => void {
    this.realtime = connections;
    return () => {
      if (this.realtime === connections) this.realtime = null;
    };
  }

  /** The queue gauges, read by `read` when scraped (a process that runs the worker). */
  trackQueue(read: () => Promise<QueueStats>): () => void {
    this.registerQueueGauges();
    const queue = { read, last: null, atMs: 0, pending: null };
    this.queue = queue;
    return () => {
      if (this.queue === queue) this.queue = null;
    };
  }

  /**
   * The name of every series this process can export, as PromQL sees them (a histogram's `_bucket`,
   * `_sum` and `_count`), the queue's gauges included: what the alert rules and the dashboard may name.
   */
  static exportedSeriesNames(): string[] {
    const metrics = new Metrics();
    metrics.registerQueueGauges();
    const names: string[] = [];
    for (const metric of metrics.registry.getMetricsAsArray()) {
      const { name, type } = metric as unknown as { name: string; type: string };
      if (type === 'histogram') names.push(`${name}_bucket`, `${name}_sum`, `${name}_count`);
      else if (type === 'summary') names.push(name, `${name}_sum`, `${name}_count`);
      else names.push(name);
    }
    return names.sort();
  }

  /** The Prometheus text of every series. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * The queue's figures, read at most once per QUERY_TTL_MS and once at a time (three gauges share one
   * read). When the database cannot answer, the gauges keep their last values: `dependency_up` says why.
   */
  private async queueStats(): Promise<QueueStats | null> {
    const queue = this.queue;
    if (!queue) return null;
    if (queue.last && Date.now() - queue.atMs < QUERY_TTL_MS) return queue.last;
    queue.pending ??= queue
      .read()
      .then((stats) => {
        queue.last = stats;
        queue.atMs = Date.now();
      })
      .catch(() => {})
      .finally(() => {
        queue.pending = null;
      });
    await queue.pending;
    return queue.last;
  }
}
