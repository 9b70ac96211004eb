/**
 * Webhook operations (decisions §12) through HTTP, with a real worker and a real local receiver: the
 * attempt log and GET /v1/developer/deliveries/{id}, recover (window edges, batching as seen in the
 * database, other partners not starved), secret rotation with a grace (Stripe's verification scheme
 * accepts a delivery with either secret), endpoint health over 24 h on the test clock, sample events of
 * every kind, the event catalog, and webhook.updated.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import Stripe from 'stripe';
import Value from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { bearerAuthContract } from '../../../test/contracts.js';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { type ReceivedRequest, WebhookReceiver } from '../../../test/webhook-receiver.js';
import { newId } from '../../shared/ids.js';
import type { ApiKeyScope } from '../../shared/schemas.js';
import { feedRecoveries } from '../../worker/recovery-feeder.js';
import { startWorker, type Worker } from '../../worker/worker.js';
import { EVENT_SCHEMAS, EVENT_TYPES, type EventType } from './event-catalog.js';
import { RECOVERY_BATCH } from './queue/recover-deliveries.js';
import { WEBHOOK_UPDATED_EVENT, type WebhookUpdated } from './signals.js';
import { ALL_EVENTS, createWebhookVia, devAuth, waitFor, waitForDeliveries } from './webhooks.test-helpers.js';

const stripe = new Stripe('sk_test_not_used');
const SOME_ID = '7d0c1a52-3a59-4c1f-9d5e-0b1f4f0e2a11';
const WORKER_OPTIONS = { attemptTimeoutMs: 2_000, leaseMs: 10_000, pollIntervalMs: 100 };
const HOUR = 3_600_000;

let t: TestApp;
let receiver: WebhookReceiver;
let pathSeq = 0;

beforeAll(async () => {
  t = await createTestApp();
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

/** A worker for this test only, stopped when it ends. */
function runWorker(options: Partial<typeof WORKER_OPTIONS> = {}): Worker {
  const worker = startWorker(t.ctx, { ...WORKER_OPTIONS, ...options });
  onTestFinished(() => worker.stop());
  return worker;
}

async function setup(options: { scopes?: ApiKeyScope[] } = {}) {
  const partner = await createPartner(t.ctx);
  const key = await createKey(t.ctx, partner.id, { scopes: options.scopes });
  const path = `/ops-${++pathSeq}`;
  const hook = await createWebhookVia(t, await devAuth(t, partner), {
    apiKeyId: key.id,
    url: receiver.url(path),
    events: ALL_EVENTS,
  });
  return { partner, key, hook, path };
}

async function call(partner: TestPartner | null, method: 'GET' | 'POST', url: string, payload?: unknown) {
  return t.live.inject({ method, url, headers: partner ? await devAuth(t, partner) : {}, payload: payload as never });
}

async function sendTest(partner: TestPartner, webhookId: string, event?: string) {
  const res = await call(
    partner,
    'POST',
    `/v1/developer/webhooks/${webhookId}/test`,
    event === undefined ? undefined : { event },
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: string; event: string };
}

async function detail(partner: TestPartner, deliveryId: string) {
  const res = await call(partner, 'GET', `/v1/developer/deliveries/${deliveryId}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/**
 * Stripe's verification scheme, written here from its documentation: the header is comma-separated
 * `k=v` pairs; `t` the timestamp; every `v1` a candidate; the body is accepted when any v1 equals the
 * hex HMAC-SHA256 of `${t}.${body}` keyed with the secret, and t is within the tolerance.
 */
function stripeSchemeAccepts(body: string, header: string, secret: string, toleranceSec = 300): boolean {
  const pairs = header.split(',').map((p) => p.split('='));
  const t = Number(pairs.find(([k]) => k === 't')?.[1]);
  if (!Number.isFinite(t) || Math.abs(Date.now() / 1000 - t) > toleranceSec) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex'));
  return pairs
    .filter(([k]) => k === 'v1')
    .some(([, v]) => v !== undefined && v.length === expected.length && timingSafeEqual(Buffer.from(v), expected));
}

/** Inserts deliveries of `webhookId` directly (created `ageMs` ago, one ms apart), as a history would hold them. */
async function seed(
  partnerId: string,
  webhookId: string,
  rows: Array<{ status: 'FAILED' | 'DEAD' | 'DELIVERED' | 'PENDING'; createdAt: Date }>,
): Promise<string[]> {
  const ids = rows.map(() => newId());
  await t.ctx.db.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, status_code,
                                     last_error, next_attempt_at, created_at, updated_at)
     SELECT i, $1, $2, 'evt_seed_' || i::text, 'order.placed', '{"seeded":true}', s, 6, 500, 'HTTP 500',
            CASE WHEN s = 'FAILED' THEN $5::timestamptz + interval '1 hour' END, c, c
       FROM unnest($3::uuid[], $4::text[], $6::timestamptz[]) AS x(i, s, c)`,
    [webhookId, partnerId, ids, rows.map((r) => r.status), t.clock.now(), rows.map((r) => r.createdAt)],
  );
  return ids;
}

async function statusCounts(webhookId: string): Promise<Record<string, number>> {
  const rows = await t.ctx.db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 GROUP BY status',
    [webhookId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

describe('GET /v1/developer/deliveries/{id}', () => {
  bearerAuthContract(() => t, { method: 'GET', url: `/v1/developer/deliveries/${SOME_ID}`, role: 'PARTNER' });

  it('answers the payload exactly as signed and every attempt, oldest first, with what was sent and answered', async () => {
    runWorker();
    const h = await setup();
    receiver.on(h.path, (_r, i) =>
      i === 0 ? { status: 503, body: 'upstream down, try later' } : { status: 200, body: '{"ok":true}' },
    );
    const queued = await sendTest(h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'FAILED');
    t.clock.advance(61);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'DELIVERED');

    const body = await detail(h.partner, queued.id);
    const received = receiver.requestsTo(h.path);
    expect(received).toHaveLength(2);
    expect(body).toMatchObject({
      id: queued.id,
      webhookId: h.hook.id,
      event: 'ping',
      status: 'DELIVERED',
      statusCode: 200,
    });
    expect(body.payload).toBe(received[0].body);
    expect(JSON.parse(body.payload)).toMatchObject({ type: 'ping', data: { webhookId: h.hook.id } });
    expect(body.attempts.map((a: { number: number }) => a.number)).toEqual([1, 2]);
    const [first, second] = body.attempts;
    expect(first).toMatchObject({ statusCode: 503, error: 'HTTP 503', responseBody: 'upstream down, try later' });
    expect(second).toMatchObject({ statusCode: 200, error: null, responseBody: '{"ok":true}' });
    expect(Date.parse(second.at) - Date.parse(first.at)).toBeGreaterThanOrEqual(60_000);
    for (const [i, attempt] of body.attempts.entries()) {
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
      expect(attempt.responseHeaders['content-type']).toBe('text/plain');
      // The headers we sent, and only Content-Type and the X-Partner-* ones: exactly what the endpoint got.
      expect(Object.keys(attempt.requestHeaders).sort()).toEqual([
        'content-type',
        'x-partner-delivery',
        'x-partner-event',
        'x-partner-signature',
      ]);
      for (const [name, value] of Object.entries(attempt.requestHeaders)) expect(received[i].headers[name]).toBe(value);
    }
  });

  it('keeps earlier attempts across a redeliver, numbering on; records network failures without an answer', async () => {
    runWorker();
    const h = await setup();
    await t.ctx.db.query('UPDATE webhooks SET url = $2 WHERE id = $1', [h.hook.id, 'http://127.0.0.1:1/closed']);
    const queued = await sendTest(h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'FAILED');
    await t.ctx.db.query('UPDATE webhooks SET url = $2 WHERE id = $1', [h.hook.id, receiver.url(h.path)]);
    const res = await call(h.partner, 'POST', `/v1/developer/deliveries/${queued.id}/redeliver`);
    expect(res.statusCode).toBe(200);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'DELIVERED');
    const body = await detail(h.partner, queued.id);
    expect(body.attempts).toEqual([
      expect.objectContaining({
        number: 1,
        statusCode: null,
        error: 'connection refused',
        responseHeaders: null,
        responseBody: null,
      }),
      expect.objectContaining({ number: 2, statusCode: 200, error: null, responseBody: 'ok' }),
    ]);
    expect(body.attempts[0].requestHeaders['x-partner-delivery']).toBe(queued.id);
  });

  it('stores at most the first 4 KiB of a body, whole characters, and a binary body as a short note', async () => {
    runWorker();
    const long = await setup();
    receiver.on(long.path, { status: 500, body: `${'é'.repeat(3000)}TAIL` });
    const a = await sendTest(long.partner, long.hook.id);
    const binary = await setup();
    receiver.on(binary.path, { status: 200, body: 'PNG\u0000\u0001\u0002 bytes' });
    const b = await sendTest(binary.partner, binary.hook.id);
    await waitForDeliveries(t, long.partner, long.hook.id, (d) => d[0]?.status === 'FAILED');
    await waitForDeliveries(t, binary.partner, binary.hook.id, (d) => d[0]?.status === 'DELIVERED');
    const cut = (await detail(long.partner, a.id)).attempts[0].responseBody as string;
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(cut)).toBeGreaterThan(4090);
    expect(cut).toBe('é'.repeat(2048));
    expect((await detail(binary.partner, b.id)).attempts[0].responseBody).toBe(
      '[binary body not stored: 12 bytes of text/plain]',
    );
  });

  it("answers 404 for another partner's delivery, an unknown id and a malformed one; 403 without webhooks:manage", async () => {
    runWorker();
    const h = await setup();
    const queued = await sendTest(h.partner, h.hook.id);
    const other = await createPartner(t.ctx);
    expectError(await call(other, 'GET', `/v1/developer/deliveries/${queued.id}`), 404, 'ERR_NOT_FOUND');
    expectError(await call(h.partner, 'GET', `/v1/developer/deliveries/${SOME_ID}`), 404, 'ERR_NOT_FOUND');
    expectError(await call(h.partner, 'GET', '/v1/developer/deliveries/not-a-uuid'), 404, 'ERR_NOT_FOUND');
    await t.ctx.db.query("UPDATE api_keys SET scopes = array_remove(scopes, 'webhooks:manage') WHERE id = $1", [h.key.id]);
    expectError(await call(h.partner, 'GET', `/v1/developer/deliveries/${queued.id}`), 403, 'ERR_API_KEY_SCOPE');
  });

  it('attempts go with their delivery: the retention purge and deleting the webhook remove them', async () => {
    runWorker();
    const h = await setup();
    const queued = await sendTest(h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'DELIVERED');
    const count = async () =>
      (
        await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE delivery_id = $1', [
          queued.id,
        ])
      )[0].n;
    expect(await count()).toBe(1);
    await t.ctx.db.query("UPDATE webhook_deliveries SET created_at = created_at - interval '36 days' WHERE id = $1", [queued.id]);
    const { purgeExpired } = await import('../../worker/purge.js');
    await purgeExpired(t.ctx);
    expect(await count()).toBe(0);
    expectError(await call(h.partner, 'GET', `/v1/developer/deliveries/${queued.id}`), 404, 'ERR_NOT_FOUND');

    const second = await sendTest(h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d.some((x) => x.id === second.id && x.status === 'DELIVERED'));
    expect(
      (
        await t.live.inject({
          method: 'DELETE',
          url: `/v1/developer/webhooks/${h.hook.id}`,
          headers: await devAuth(t, h.partner),
        })
      ).statusCode,
    ).toBe(204);
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE webhook_id = $1',
      [h.hook.id],
    );
    expect(n).toBe(0);
  });
});

describe('POST /v1/developer/webhooks/{id}/recover', () => {
  bearerAuthContract(() => t, {
    method: 'POST',
    url: `/v1/developer/webhooks/${SOME_ID}/recover`,
    role: 'PARTNER',
    body: { since: new Date(Date.now() - HOUR).toISOString() },
  });

  it('queues the FAILED and DEAD deliveries created in [since, until), and only those: edges just inside and just outside', async () => {
    const h = await setup();
    const now = t.clock.nowMs();
    const since = new Date(now - 2 * HOUR);
    const until = new Date(now - HOUR);
    const [atSince, justBeforeUntil, justBeforeSince, atUntil, delivered, dead] = await seed(h.partner.id, h.hook.id, [
      { status: 'FAILED', createdAt: since },
      { status: 'DEAD', createdAt: new Date(until.getTime() - 1) },
      { status: 'DEAD', createdAt: new Date(since.getTime() - 1) },
      { status: 'FAILED', createdAt: until },
      { status: 'DELIVERED', createdAt: new Date(since.getTime() + 1000) },
      { status: 'DEAD', createdAt: new Date(since.getTime() + 2000) },
    ]);
    const res = await call(h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/recover`, {
      since: since.toISOString(),
      until: until.toISOString(),
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ queued: 3 });
    const rows = await t.ctx.db.query<{ id: string; status: string; attempts: number; last_error: string | null }>(
      'SELECT id, status, attempts, last_error FROM webhook_deliveries WHERE webhook_id = $1',
      [h.hook.id],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of [atSince, justBeforeUntil, dead]) {
      expect(byId.get(id)).toMatchObject({ status: 'PENDING', attempts: 0, last_error: null });
    }
    expect(byId.get(justBeforeSince)?.status).toBe('DEAD');
    expect(byId.get(atUntil)?.status).toBe('FAILED');
    expect(byId.get(delivered)?.status).toBe('DELIVERED');
    // A small recovery is done when it answers: nothing is left for the worker to feed.
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_recoveries WHERE webhook_id = $1',
      [h.hook.id],
    );
    expect(n).toBe(0);
  });

  it('without until recovers up to now, and the requeued deliveries are delivered', async () => {
    runWorker();
    const h = await setup();
    const ids = await seed(h.partner.id, h.hook.id, [
      { status: 'DEAD', createdAt: new Date(t.clock.nowMs() - 10 * HOUR) },
      { status: 'FAILED', createdAt: new Date(t.clock.nowMs() - 1000) },
    ]);
    const res = await call(h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/recover`, {
      since: new Date(t.clock.nowMs() - 11 * HOUR).toISOString(),
    });
    expect(res.json()).toEqual({ queued: 2 });
    const items = await waitForDeliveries(t, h.partner, h.hook.id, (d) => d.filter((x) => x.status === 'DELIVERED').length === 2);
    expect(items.map((d) => d.id).sort()).toEqual([...ids].sort());
  });

  it(`queues a large window ${RECOVERY_BATCH} at a time: the next batch only once the webhook has room`, async () => {
    const h = await setup();
    const total = RECOVERY_BATCH * 3 + 50;
    const base = t.clock.nowMs() - 5 * HOUR;
    await seed(
      h.partner.id,
      h.hook.id,
      Array.from({ length: total }, (_, i) => ({
        status: i % 2 ? ('DEAD' as const) : ('FAILED' as const),
        createdAt: new Date(base + i),
      })),
    );
    const res = await call(h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/recover`, {
      since: new Date(base).toISOString(),
    });
    expect(res.json()).toEqual({ queued: total });
    // The request queued the first batch, the oldest; the rest waits.
    expect(await statusCounts(h.hook.id)).toEqual({
      PENDING: RECOVERY_BATCH,
      FAILED: (total - RECOVERY_BATCH) / 2,
      DEAD: (total - RECOVERY_BATCH) / 2,
    });
    const oldestPending = await t.ctx.db.query<{ created_at: Date }>(
      "SELECT max(created_at) AS created_at FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'PENDING'",
      [h.hook.id],
    );
    expect(oldestPending[0].created_at.getTime()).toBe(base + RECOVERY_BATCH - 1);
    // While the batch is still queued, feeding adds nothing.
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(0);
    // As deliveries go out, each feed tops the webhook up to a batch, oldest first.
    await t.ctx.db.query(
      `UPDATE webhook_deliveries SET status = 'DELIVERED' WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'PENDING' ORDER BY created_at LIMIT 60)`,
      [h.hook.id],
    );
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(60);
    expect((await statusCounts(h.hook.id)).PENDING).toBe(RECOVERY_BATCH);
    // A disabled webhook's recovery waits; switched on again, it goes on.
    await t.ctx.db.query("UPDATE webhook_deliveries SET status = 'DELIVERED' WHERE webhook_id = $1 AND status = 'PENDING'", [
      h.hook.id,
    ]);
    await t.ctx.db.query('UPDATE webhooks SET is_active = false WHERE id = $1', [h.hook.id]);
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(0);
    await t.ctx.db.query('UPDATE webhooks SET is_active = true WHERE id = $1', [h.hook.id]);
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(RECOVERY_BATCH);
    await t.ctx.db.query("UPDATE webhook_deliveries SET status = 'FAILED' WHERE webhook_id = $1 AND status = 'PENDING'", [
      h.hook.id,
    ]);
    // The last step takes what is left and ends the recovery; deliveries it queued and that failed again stay behind the cursor.
    const left = total - RECOVERY_BATCH - 60 - RECOVERY_BATCH;
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(left);
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(0);
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_recoveries WHERE webhook_id = $1',
      [h.hook.id],
    );
    expect(n).toBe(0);
  });

  it("a recovering endpoint that hangs holds a batch at most, and another partner's deliveries go out meanwhile", async () => {
    // Hung attempts must not time out while the test looks (a timed-out one would make room for more).
    runWorker({ attemptTimeoutMs: 60_000, leaseMs: 120_000 });
    const slow = await setup();
    receiver.on(slow.path, { hang: true });
    const total = RECOVERY_BATCH * 3;
    const base = t.clock.nowMs() - HOUR;
    await seed(
      slow.partner.id,
      slow.hook.id,
      Array.from({ length: total }, (_, i) => ({ status: 'DEAD' as const, createdAt: new Date(base + i) })),
    );
    const res = await call(slow.partner, 'POST', `/v1/developer/webhooks/${slow.hook.id}/recover`, {
      since: new Date(base).toISOString(),
    });
    expect(res.json()).toEqual({ queued: total });
    await waitFor(() => receiver.hungCount(slow.path) === 8);
    const other = await setup();
    const ping = await sendTest(other.partner, other.hook.id);
    await waitForDeliveries(t, other.partner, other.hook.id, (d) => d.some((x) => x.id === ping.id && x.status === 'DELIVERED'));
    const counts = await statusCounts(slow.hook.id);
    expect(counts.PENDING).toBe(RECOVERY_BATCH);
    expect(counts.DEAD).toBe(total - RECOVERY_BATCH);
    // Once the endpoint answers, the whole window goes out.
    receiver.on(slow.path, { status: 200 });
    receiver.releaseHung(200, slow.path);
    await waitFor(async () => (await statusCounts(slow.hook.id)).DELIVERED === total, 60_000);
  }, 90_000);

  it('refuses since older than 35 days, since not before until, and unknown fields, naming the field', async () => {
    const h = await setup();
    const url = `/v1/developer/webhooks/${h.hook.id}/recover`;
    const now = t.clock.nowMs();
    const cases: Array<[unknown, string]> = [
      [{ since: new Date(now - 36 * 24 * HOUR).toISOString() }, 'since'],
      [{ since: new Date(now - HOUR).toISOString(), until: new Date(now - 2 * HOUR).toISOString() }, 'since'],
      [{ since: new Date(now - HOUR).toISOString(), until: new Date(now - HOUR).toISOString() }, 'since'],
      [{ since: 'yesterday' }, 'since'],
      [{}, 'since'],
      [{ since: new Date(now - HOUR).toISOString(), until: 5 }, 'until'],
      [{ since: new Date(now - HOUR).toISOString(), limit: 5 }, 'limit'],
    ];
    for (const [payload, field] of cases) {
      const res = await call(h.partner, 'POST', url, payload);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(
        res.json().details.map((d: { field: string }) => d.field),
        JSON.stringify(payload),
      ).toContain(field);
    }
    // 35 days back (less the moment the request takes) is allowed.
    expect(
      (await call(h.partner, 'POST', url, { since: new Date(now - 35 * 24 * HOUR + 60_000).toISOString() })).statusCode,
    ).toBe(202);
  });

  it("answers 409 ERR_WEBHOOK_DISABLED on a disabled webhook, 404 for another partner's, 403 without the scope", async () => {
    const h = await setup();
    const since = new Date(t.clock.nowMs() - HOUR).toISOString();
    const url = `/v1/developer/webhooks/${h.hook.id}/recover`;
    const other = await createPartner(t.ctx);
    expectError(await call(other, 'POST', url, { since }), 404, 'ERR_NOT_FOUND');
    expectError(await call(h.partner, 'POST', '/v1/developer/webhooks/nope/recover', { since }), 404, 'ERR_NOT_FOUND');
    await t.ctx.db.query('UPDATE webhooks SET is_active = false WHERE id = $1', [h.hook.id]);
    expectError(await call(h.partner, 'POST', url, { since }), 409, 'ERR_WEBHOOK_DISABLED');
    await t.ctx.db.query("UPDATE api_keys SET scopes = array_remove(scopes, 'webhooks:manage') WHERE id = $1", [h.key.id]);
    expectError(await call(h.partner, 'POST', url, { since }), 403, 'ERR_API_KEY_SCOPE');
  });
});

describe('POST /v1/developer/webhooks/{id}/rotate-secret', () => {
  bearerAuthContract(() => t, { method: 'POST', url: `/v1/developer/webhooks/${SOME_ID}/rotate-secret`, role: 'PARTNER' });

  async function rotate(partner: TestPartner, webhookId: string, payload?: unknown) {
    const res = await call(partner, 'POST', `/v1/developer/webhooks/${webhookId}/rotate-secret`, payload);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { id: string; secret: string; previousSecretExpiresAt: string; isActive: boolean };
  }

  async function deliveredTest(h: Awaited<ReturnType<typeof setup>>): Promise<ReceivedRequest> {
    const queued = await sendTest(h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d.some((x) => x.id === queued.id && x.status === 'DELIVERED'));
    const got = receiver.requestsTo(h.path).find((r) => r.headers['x-partner-delivery'] === queued.id);
    if (!got) throw new Error('not received');
    return got;
  }

  it("during the grace a delivery carries both signatures and Stripe's scheme accepts it with either secret; after it, only the new one", async () => {
    runWorker();
    const h = await setup();
    const oldSecret = h.hook.secret;
    const before = t.clock.nowMs();
    const rotated = await rotate(h.partner, h.hook.id, { graceHours: 2 });
    const rotatedBy = t.clock.nowMs();
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(rotated.secret).not.toBe(oldSecret);
    expect(rotated).toMatchObject({ id: h.hook.id, isActive: true });
    expect(Date.parse(rotated.previousSecretExpiresAt) - 2 * HOUR).toBeGreaterThanOrEqual(before);
    expect(Date.parse(rotated.previousSecretExpiresAt) - 2 * HOUR).toBeLessThanOrEqual(rotatedBy);

    const during = await deliveredTest(h);
    const header = String(during.headers['x-partner-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const secret of [rotated.secret, oldSecret]) {
      expect(stripeSchemeAccepts(during.body, header, secret)).toBe(true);
      expect(stripe.webhooks.constructEvent(during.body, header, secret).id).toBe(JSON.parse(during.body).id);
    }
    expect(stripeSchemeAccepts(during.body, header, 'whsec_wrong')).toBe(false);

    t.clock.advance((2 * HOUR + 1000) / 1000);
    const after = await deliveredTest(h);
    const single = String(after.headers['x-partner-signature']);
    expect(single).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(stripeSchemeAccepts(after.body, single, rotated.secret)).toBe(true);
    expect(stripeSchemeAccepts(after.body, single, oldSecret)).toBe(false);
  });

  it('keeps at most two secrets: rotating again ends the older grace; graceHours 0 signs with the new one only', async () => {
    runWorker();
    const h = await setup();
    const first = h.hook.secret;
    const second = (await rotate(h.partner, h.hook.id)).secret;
    const third = await rotate(h.partner, h.hook.id, { graceHours: 168 });
    expect(Date.parse(third.previousSecretExpiresAt) - t.clock.nowMs()).toBeGreaterThan(167 * HOUR);
    const got = await deliveredTest(h);
    const header = String(got.headers['x-partner-signature']);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(stripeSchemeAccepts(got.body, header, third.secret)).toBe(true);
    expect(stripeSchemeAccepts(got.body, header, second)).toBe(true);
    expect(stripeSchemeAccepts(got.body, header, first)).toBe(false);

    const now = await rotate(h.partner, h.hook.id, { graceHours: 0 });
    expect(Date.parse(now.previousSecretExpiresAt)).toBeLessThanOrEqual(t.clock.nowMs());
    const next = await deliveredTest(h);
    expect(String(next.headers['x-partner-signature']).match(/v1=/g)).toHaveLength(1);
    expect(stripeSchemeAccepts(next.body, String(next.headers['x-partner-signature']), now.secret)).toBe(true);
  });

  it('stores both secrets encrypted, never in clear', async () => {
    const h = await setup();
    const rotated = await rotate(h.partner, h.hook.id);
    const [row] = await t.ctx.db.query<{ secret_ciphertext: string; previous_secret_ciphertext: string }>(
      'SELECT secret_ciphertext, previous_secret_ciphertext FROM webhooks WHERE id = $1',
      [h.hook.id],
    );
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(rotated.secret.slice(6));
    expect(stored).not.toContain(h.hook.secret.slice(6));
    expect(t.ctx.secrets.decrypt(row.secret_ciphertext)).toBe(rotated.secret);
    expect(t.ctx.secrets.decrypt(row.previous_secret_ciphertext)).toBe(h.hook.secret);
    const list = await call(h.partner, 'GET', '/v1/developer/webhooks');
    expect(list.body).not.toContain('whsec_');
  });

  it('refuses graceHours outside 0–168 and unknown fields, naming the field; 404 for another partner', async () => {
    const h = await setup();
    const url = `/v1/developer/webhooks/${h.hook.id}/rotate-secret`;
    for (const [payload, field] of [
      [{ graceHours: -1 }, 'graceHours'],
      [{ graceHours: 169 }, 'graceHours'],
      [{ graceHours: 1.5 }, 'graceHours'],
      [{ graceHours: '24' }, 'graceHours'],
      [{ grace: 24 }, 'grace'],
    ] as const) {
      const res = await call(h.partner, 'POST', url, payload);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expectError(await call(await createPartner(t.ctx), 'POST', url, {}), 404, 'ERR_NOT_FOUND');
  });
});

describe('GET /v1/developer/webhooks/{id}/health', () => {
  bearerAuthContract(() => t, { method: 'GET', url: `/v1/developer/webhooks/${SOME_ID}/health`, role: 'PARTNER' });

  it('counts the attempts of the last 24 h: delivered, failed, dead, success rate, p50/p99; last success and failure of any time', async () => {
    const h = await setup();
    const now = t.clock.nowMs();
    const [old, ...recent] = await seed(h.partner.id, h.hook.id, [
      { status: 'DELIVERED', createdAt: new Date(now - 30 * HOUR) },
      ...Array.from({ length: 4 }, () => ({ status: 'DELIVERED' as const, createdAt: new Date(now - HOUR) })),
    ]);
    const attempt = (id: string, number: number, atMs: number, durationMs: number, outcome: string) =>
      t.ctx.db.query(
        `INSERT INTO webhook_delivery_attempts (delivery_id, number, webhook_id, at, duration_ms, outcome, status_code, error, request_headers)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '{}')`,
        [
          id,
          number,
          h.hook.id,
          new Date(atMs),
          durationMs,
          outcome,
          outcome === 'DELIVERED' ? 200 : 500,
          outcome === 'DELIVERED' ? null : 'HTTP 500',
        ],
      );
    await attempt(old, 1, now - 30 * HOUR, 9000, 'FAILED'); // outside the window: counts only as the last failure
    await attempt(old, 2, now - 25 * HOUR, 9000, 'DELIVERED');
    await attempt(recent[0], 1, now - 2 * HOUR, 100, 'DELIVERED');
    await attempt(recent[1], 1, now - 2 * HOUR, 200, 'DELIVERED');
    await attempt(recent[2], 1, now - 2 * HOUR, 300, 'FAILED');
    await attempt(recent[3], 1, now - 90 * 60_000, 400, 'DEAD');
    await t.ctx.db.query('UPDATE webhooks SET consecutive_failures = 3 WHERE id = $1', [h.hook.id]);

    const res = await call(h.partner, 'GET', `/v1/developer/webhooks/${h.hook.id}/health`);
    expect(res.statusCode, res.body).toBe(200);
    const { since, ...health } = res.json();
    expect(Date.parse(since) - (now - 24 * HOUR)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(since)).toBeLessThanOrEqual(t.clock.nowMs() - 24 * HOUR);
    expect(health).toEqual({
      webhookId: h.hook.id,
      delivered: 2,
      failedAttempts: 2,
      dead: 1,
      successRate: 0.5,
      p50Ms: 250,
      p99Ms: 397,
      lastSuccessAt: new Date(now - 2 * HOUR).toISOString(),
      lastFailureAt: new Date(now - 90 * 60_000).toISOString(),
      consecutiveFailures: 3,
      isActive: true,
    });
    // A day later the window is empty, and says so.
    t.clock.advance((24 * HOUR) / 1000);
    expect((await call(h.partner, 'GET', `/v1/developer/webhooks/${h.hook.id}/health`)).json()).toMatchObject({
      delivered: 0,
      failedAttempts: 0,
      dead: 0,
      successRate: null,
      p50Ms: null,
      p99Ms: null,
      lastSuccessAt: new Date(now - 2 * HOUR).toISOString(),
    });
  });

  it('shows a failing endpoint as failing before any delivery is dead', async () => {
    runWorker();
    const h = await setup();
    receiver.on(h.path, { status: 500 });
    for (let i = 0; i < 5; i++) await sendTest(h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d.length === 5 && d.every((x) => x.status === 'FAILED'));
    const health = (await call(h.partner, 'GET', `/v1/developer/webhooks/${h.hook.id}/health`)).json();
    expect(health).toMatchObject({
      delivered: 0,
      failedAttempts: 5,
      dead: 0,
      successRate: 0,
      lastSuccessAt: null,
      consecutiveFailures: 0,
    });
    expect(health.lastFailureAt).not.toBeNull();
  });

  it("answers 404 for another partner's webhook and 403 without the scope", async () => {
    const h = await setup();
    expectError(
      await call(await createPartner(t.ctx), 'GET', `/v1/developer/webhooks/${h.hook.id}/health`),
      404,
      'ERR_NOT_FOUND',
    );
    await t.ctx.db.query("UPDATE api_keys SET scopes = array_remove(scopes, 'webhooks:manage') WHERE id = $1", [h.key.id]);
    expectError(await call(h.partner, 'GET', `/v1/developer/webhooks/${h.hook.id}/health`), 403, 'ERR_API_KEY_SCOPE');
  });
});

describe('POST /v1/developer/webhooks/{id}/test with an event kind', () => {
  it('sends a realistic, really signed sample of every kind, valid against its catalog schema, with an evt_test_ id', async () => {
    runWorker();
    const h = await setup();
    const sent = new Map<string, EventType>();
    for (const kind of EVENT_TYPES) sent.set((await sendTest(h.partner, h.hook.id, kind)).id, kind);
    await waitForDeliveries(
      t,
      h.partner,
      h.hook.id,
      (d) => d.length === EVENT_TYPES.length && d.every((x) => x.status === 'DELIVERED'),
    );
    for (const request of receiver.requestsTo(h.path)) {
      const kind = sent.get(String(request.headers['x-partner-delivery'])) as EventType;
      const body = JSON.parse(request.body);
      expect(request.headers['x-partner-event']).toBe(kind);
      expect(body.type).toBe(kind);
      expect(body.id).toMatch(/^evt_test_[0-9a-f]{32}$/);
      expect(body.environment).toBe('live');
      expect([...Value.Errors(EVENT_SCHEMAS[kind], body)], kind).toEqual([]);
      expect(stripeSchemeAccepts(request.body, String(request.headers['x-partner-signature']), h.hook.secret)).toBe(true);
    }
  });

  it("shows the sample's order as the key sees orders: no customer without orders:pii", async () => {
    runWorker();
    const h = await setup({ scopes: ['orders:read', 'webhooks:manage'] });
    const queued = await sendTest(h.partner, h.hook.id, 'order.delivered');
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'DELIVERED');
    const body = JSON.parse((await detail(h.partner, queued.id)).payload);
    expect(body.data.order.customer).toBeNull();
    expect(body.data).toMatchObject({ previousStatus: 'EN_ROUTE', order: { status: 'DELIVERED' } });
  });

  it('refuses an unknown kind naming the field, and answers a ping without a body as before', async () => {
    const h = await setup();
    const res = await call(h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/test`, { event: 'order.teleported' });
    expectError(res, 400, 'ERR_VALIDATION');
    expect(res.json().details[0].field).toBe('event');
    expect((await sendTest(h.partner, h.hook.id)).event).toBe('ping');
  });
});

describe('GET /v1/developer/event-types', () => {
  it('is public and lists ping and every WebhookEvent kind, each with its envelope schema and a valid example', async () => {
    const res = await t.live.inject({ method: 'GET', url: '/v1/developer/event-types' });
    expect(res.statusCode).toBe(200);
    const { items } = res.json() as { items: Array<{ type: string; description: string; schema: object; example: unknown }> };
    expect(items.map((i) => i.type)).toEqual(['ping', ...ALL_EVENTS]);
    for (const item of items) {
      expect(item.description.length).toBeGreaterThan(20);
      expect(item.schema).toEqual(JSON.parse(JSON.stringify(EVENT_SCHEMAS[item.type as EventType])));
      expect([...Value.Errors(EVENT_SCHEMAS[item.type as EventType], item.example)], item.type).toEqual([]);
    }
    expect((await t.sandbox.inject({ method: 'GET', url: '/v1/developer/event-types' })).statusCode).toBe(200);
  });
});

describe('webhook.updated', () => {
  it('is announced to the partner when a webhook is edited, rotated, or its streak or isActive changes', async () => {
    runWorker();
    const h = await setup();
    const seen: WebhookUpdated[] = [];
    const listener = (e: WebhookUpdated) => {
      if (e.webhook.id === h.hook.id) seen.push(e);
    };
    t.ctx.events.on(WEBHOOK_UPDATED_EVENT, listener);
    onTestFinished(() => void t.ctx.events.off(WEBHOOK_UPDATED_EVENT, listener));

    const auth = await devAuth(t, h.partner);
    await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${h.hook.id}`,
      headers: auth,
      payload: { isActive: false },
    });
    await waitFor(() => seen.length === 1);
    expect(seen[0]).toEqual({ partnerId: h.partner.id, webhook: expect.objectContaining({ id: h.hook.id, isActive: false }) });
    await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${h.hook.id}`,
      headers: auth,
      payload: { isActive: true },
    });
    await call(h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/rotate-secret`, {});
    await waitFor(() => seen.length === 3);
    expect(JSON.stringify(seen)).not.toContain('whsec_');
    // A delivered attempt ends a streak: announced with the streak at 0.
    await t.ctx.db.query('UPDATE webhooks SET consecutive_failures = 4 WHERE id = $1', [h.hook.id]);
    await sendTest(h.partner, h.hook.id);
    await waitFor(() => seen.length === 4);
    expect(seen[3].webhook).toMatchObject({ consecutiveFailures: 0, isActive: true });
  });

  it('a dead delivery moves the streak and is announced; the 50th switches the webhook off', async () => {
    runWorker();
    const h = await setup();
    receiver.on(h.path, { status: 500 });
    const seen: WebhookUpdated[] = [];
    const listener = (e: WebhookUpdated) => {
      if (e.webhook.id === h.hook.id) seen.push(e);
    };
    t.ctx.events.on(WEBHOOK_UPDATED_EVENT, listener);
    onTestFinished(() => void t.ctx.events.off(WEBHOOK_UPDATED_EVENT, listener));
    await t.ctx.db.query('UPDATE webhooks SET consecutive_failures = 49 WHERE id = $1', [h.hook.id]);
    // A delivery at the last attempt of its schedule: it dies on it.
    await t.ctx.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, 'evt_last_try', 'ping', '{}', 'FAILED', 5, $4, $4, $4)`,
      [newId(), h.hook.id, h.partner.id, t.clock.now()],
    );
    t.ctx.events.emit('webhooks.due');
    await waitFor(() => seen.length === 1);
    expect(seen[0].webhook).toMatchObject({ consecutiveFailures: 50, isActive: false });
  });
});
