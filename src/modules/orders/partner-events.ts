/**
 * POST /v1/partner/orders/{code}/events: a partner reports PICKED_UP, EN_ROUTE, DELIVERED or FAILED
 * (spec 3.1, 4.1; decisions §4).
 *
 * Group commit. Events without an Idempotency-Key that arrive in the same turn of the event loop (many
 * couriers reporting at once) are written in ONE transaction: their orders are locked in one statement,
 * each event is checked against its locked order exactly as alone, and the accepted ones are written by
 * one statement, then one COMMIT (one WAL flush) answers them all. A refused event (404, 403, 400,
 * 409) is answered with its error and does not stop the others. Nothing is answered before the
 * COMMIT, so an accepted event is as durable as before. If the transaction itself fails (a database
 * error), each of its events is tried again alone, so one event can never fail another. Two events on
 * one order never share a transaction: the later one goes to the next, and then sees the first's
 * outcome, as two requests racing on the row lock always did.
 *
 * Events with an Idempotency-Key keep a transaction of their own (the key is claimed and the answer
 * stored with the change, under a savepoint).
 *
 * An event racing its key's rotation answers as if the two ran one after the other: the key record the
 * request was authenticated with may predate the rotation, whose transaction moves the key's orders to
 * the successor (a rotated-out key acts for its successor: decisions §5). So when a locked order is
 * assigned to another key than the record says, the key's current successor is read in the same
 * transaction (only then: the usual path costs nothing more) and the event is judged with it. The
 * order lock orders the two: a rotation that has not committed waits for the event, or the event sees
 * the order already moved and the rotation committed. An event racing a revoke is judged as having come
 * first (it was admitted before the revoke answered); one arriving after is refused at admission.
 */
import type { Queryable } from '../../db/db.js';
import { AppError, notFound, validationError } from '../../errors.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key-resolver.js';
import { findActsForKeyId } from '../keys/keys.repo.js';
import {
  claimIdempotencyKey,
  type IdempotencyScope,
  isStorableError,
  requestHash,
  saveIdempotentResponse,
} from './idempotency.js';
import { parseInstant } from './instants.js';
import {
  type JsonText,
  type LockedOrder,
  lockOrderByCode,
  lockOrdersByCodes,
  type PartnerOrderPieces,
  partnerOrderJson,
  recordStatusChange,
  recordStatusChanges,
  type StatusChange,
} from './orders.repo.js';
import type { CreatePartnerOrderEventDto, PartnerOrder } from './orders.schemas.js';
import { hasPii, type OrdersDeps, statusChangeOf } from './orders.service.js';
import { outboxCommitted } from './outbox.js';
import { partnerEventTarget } from './state-machine.js';

/** A successful answer (always 201); refusals, replayed ones included, are thrown. */
export interface PartnerEventResult {
  /** The JSON text of the answer, or (a replay) the stored answer. */
  order: JsonText<PartnerOrder> | PartnerOrder;
  /** True when the answer is the stored answer of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

/** Events written by one transaction at most (one statement's arrays). */
const MAX_GROUP = 100;
/**
 * Group transactions under way at once. While one commits, new events gather into the next group:
 * fewer, fuller transactions (the fixed cost of a transaction, its round trips and its WAL flush,
 * shared by more events) rather than many small ones competing for the same CPU. Measured with 10
 * clients on the PostgreSQL server: with 1 in flight a group holds ~5 events (~3.8 when groups may
 * overlap) and an event costs the least CPU (docs/performance.md). Every transaction on orders is
 * short (none waits for a client), so a group never waits long behind another's row lock.
 */
const MAX_IN_FLIGHT = 1;

/** Rules that depend on the body alone (checked before the order is even looked up). */
function checkEventBody(body: CreatePartnerOrderEventDto): void {
  if (body.type === 'FAILED' && body.failReason === undefined) {
    throw validationError('failReason', 'is required for a FAILED event');
  }
  if (body.failReason !== undefined && body.type !== 'FAILED') {
    throw new AppError('ERR_BAD_REQUEST', 'failReason is only allowed on a FAILED event');
  }
  if (body.codCollectedQepik !== undefined && body.type !== 'DELIVERED') {
    throw new AppError('ERR_BAD_REQUEST', 'codCollectedQepik is only allowed on a DELIVERED event');
  }
  if (body.at !== undefined) parseInstant('at', body.at);
}

const hasText = (note: string | undefined) => note !== undefined && note.trim() !== '';

/**
 * The change one partner event makes to its order, locked by the caller (null: no such order), or the
 * refusal it gets. Check order (decisions-log "Orders"): body-only rules (400, done before) →
 * visibility (404) → assignment (403) → order-dependent input rules (400) → transition (409).
 */
function partnerEventChange(
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  order: LockedOrder | null,
  body: CreatePartnerOrderEventDto,
  now: Date,
): StatusChange {
  const visible =
    order !== null && order.environment === environment && (key.receivesAllOrders || order.assignedKeyId === key.actsForKeyId);
  if (!order || !visible) throw notFound('Order');
  if (order.assignedKeyId !== key.actsForKeyId) {
    throw new AppError('ERR_PARTNER_ORDER_NOT_ASSIGNED', 'This order is not assigned to this API key; it is readable only');
  }
  if (body.codCollectedQepik !== undefined) {
    if (order.paymentMethod !== 'COD') {
      throw new AppError('ERR_BAD_REQUEST', 'codCollectedQepik is only allowed on a COD order');
    }
    if (body.codCollectedQepik > order.codAmountQepik) {
      throw validationError('codCollectedQepik', `must not be above the order's COD amount (${order.codAmountQepik})`);
    }
    if (body.codCollectedQepik !== order.codAmountQepik && !hasText(body.note)) {
      throw new AppError(
        'ERR_COD_VARIANCE_NOTE_REQUIRED',
        `codCollectedQepik (${body.codCollectedQepik}) differs from the COD amount (${order.codAmountQepik}); explain it in note`,
      );
    }
  }
  const to = partnerEventTarget(body.type, order.status, order.failedAttempts);
  return statusChangeOf(
    order,
    to,
    {
      actor: 'PARTNER',
      note: `partner:${key.partnerName}`,
      partnerNote: body.note ?? null,
      failReason: body.failReason ?? null,
      codCollectedQepik: body.codCollectedQepik ?? null,
      partnerReportedAt: body.at === undefined ? null : parseInstant('at', body.at),
      apiKeyId: key.id,
    },
    now,
  );
}

/**
 * `key`, with the key it acts for read again when `order` is assigned to another key than the record
 * says (the record may predate a rotation: see the top of the file).
 */
function currentKey(q: Queryable, key: ResolvedKey, order: LockedOrder | null): ResolvedKey | Promise<ResolvedKey> {
  if (!order || order.assignedKeyId === null || order.assignedKeyId === key.actsForKeyId) return key;
  return reloadActsFor(q, key);
}

async function reloadActsFor(q: Queryable, key: ResolvedKey): Promise<ResolvedKey> {
  const actsFor = await findActsForKeyId(key.partnerId, key.id, q);
  return actsFor && actsFor !== key.actsForKeyId ? { ...key, actsForKeyId: actsFor } : key;
}

/** POST /v1/partner/orders/{code}/events, with the optional Idempotency-Key. */
export async function recordPartnerEvent(
  deps: OrdersDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  code: string,
  body: CreatePartnerOrderEventDto,
  idempotencyKey: string | undefined,
): Promise<PartnerEventResult> {
  checkEventBody(body);
  if (idempotencyKey === undefined) {
    const pieces = await writerFor(deps).write({ key, environment, code, body });
    return { order: partnerOrderJson(pieces, hasPii(key)), replayed: false };
  }
  const pii = hasPii(key);
  const idem: IdempotencyScope = {
    apiKeyId: key.id,
    key: idempotencyKey,
    requestHash: requestHash(`POST /v1/partner/orders/${code}/events`, body),
  };

  type Outcome = { kind: 'ok'; result: PartnerEventResult } | { kind: 'error'; error: AppError };
  let actingKey = key;
  const outcome = await deps.db.tx<Outcome>(async (q) => {
    const now = deps.clock.now();
    const claim = await claimIdempotencyKey(q, idem, now);
    if (claim.kind === 'replay') {
      if (claim.statusCode >= 400) {
        const stored = claim.response as { code: AppError['code']; message: string; details?: never };
        return {
          kind: 'error',
          error: new AppError(stored.code, stored.message, stored.details, { 'Idempotent-Replayed': 'true' }),
        };
      }
      return { kind: 'ok', result: { order: claim.response as PartnerOrder, replayed: true } };
    }
    // The change runs under a savepoint so a refused event can be undone while its answer is kept.
    await q.query('SAVEPOINT partner_event');
    try {
      // The row lock serialises racing events on one order: the loser waits, then sees the new status.
      const order = await lockOrderByCode(q, code);
      actingKey = await currentKey(q, key, order);
      const pieces = await recordStatusChange(q, partnerEventChange(actingKey, environment, order, body, now));
      const json = partnerOrderJson(pieces, pii);
      await saveIdempotentResponse(q, idem, 201, json);
      return { kind: 'ok', result: { order: json, replayed: false } };
    } catch (err) {
      if (!(err instanceof AppError) || !isStorableError(err)) throw err;
      await q.query('ROLLBACK TO SAVEPOINT partner_event');
      const envelope = { statusCode: err.statusCode, code: err.code, message: err.message, details: err.details };
      await saveIdempotentResponse(q, idem, err.statusCode, JSON.stringify(envelope));
      return { kind: 'error', error: err };
    }
  });
  if (outcome.kind === 'error') throw outcome.error;
  if (!outcome.result.replayed) await committed(deps, [{ environment, keyId: actingKey.actsForKeyId }]);
  return outcome.result;
}

/** After COMMIT: read caches of the orders' scopes are told, the outbox consumers are woken. */
async function committed(deps: OrdersDeps, changed: Array<{ environment: ApiKeyEnvironment; keyId: string }>): Promise<void> {
  for (const environment of new Set(changed.map((c) => c.environment))) {
    const keyIds = changed.filter((c) => c.environment === environment).map((c) => c.keyId);
    await deps.orderCache.changed({ environment, keyIds });
  }
  outboxCommitted(deps);
}

interface PendingEvent {
  key: ResolvedKey;
  environment: ApiKeyEnvironment;
  code: string;
  body: CreatePartnerOrderEventDto;
  resolve: (pieces: PartnerOrderPieces) => void;
  reject: (err: unknown) => void;
}

/** One group-commit writer per database (see the top of this file). */
const writers = new WeakMap<object, PartnerEventWriter>();
function writerFor(deps: OrdersDeps): PartnerEventWriter {
  let writer = writers.get(deps.db);
  if (!writer) {
    writer = new PartnerEventWriter(deps);
    writers.set(deps.db, writer);
  }
  return writer;
}

class PartnerEventWriter {
  private pending: PendingEvent[] = [];
  private scheduled = false;
  /** Group transactions under way. */
  private inFlight = 0;

  constructor(private readonly deps: OrdersDeps) {}

  write(event: Omit<PendingEvent, 'resolve' | 'reject'>): Promise<PartnerOrderPieces> {
    return new Promise((resolve, reject) => {
      this.pending.push({ ...event, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT) return;
    this.scheduled = true;
    // After the poll phase: every event parsed in this turn of the loop joins the group.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const waiting = this.pending;
    this.pending = [];
    const group: PendingEvent[] = [];
    const codes = new Set<string>();
    for (const event of waiting) {
      // One event per order and transaction; a second one waits for the next group.
      if (group.length >= MAX_GROUP || codes.has(event.code)) this.pending.push(event);
      else {
        codes.add(event.code);
        group.push(event);
      }
    }
    this.inFlight++;
    // commit() settles every event of the group itself. Should it fail anyway, every event it left
    // unsettled gets the error (rejecting a settled promise does nothing), and nothing becomes an
    // unhandled rejection; a failure after the answers (waking this process's outbox consumers) is made
    // up for by their poll.
    void this.commit(group)
      .catch((err: unknown) => {
        for (const event of group) event.reject(err);
      })
      .finally(() => {
        this.inFlight--;
        if (this.pending.length > 0) this.schedule();
      });
    if (this.pending.length > 0) this.schedule();
  }

  private async commit(group: PendingEvent[]): Promise<void> {
    type Decided =
      | { event: PendingEvent; key: ResolvedKey; change: StatusChange }
      | { event: PendingEvent; key: ResolvedKey; error: AppError };
    let decided: Decided[];
    let written: Map<string, PartnerOrderPieces>;
    try {
      [decided, written] = await this.deps.db.tx(async (q: Queryable) => {
        const now = this.deps.clock.now();
        const orders = new Map(
          (
            await lockOrdersByCodes(
              q,
              group.map((e) => e.code),
            )
          ).map((o) => [o.code, o]),
        );
        const outcomes: Decided[] = [];
        for (const event of group) {
          const order = orders.get(event.code) ?? null;
          const current = currentKey(q, event.key, order);
          const key = current instanceof Promise ? await current : current;
          try {
            outcomes.push({ event, key, change: partnerEventChange(key, event.environment, order, event.body, now) });
          } catch (err) {
            if (err instanceof AppError) outcomes.push({ event, key, error: err });
            else throw err;
          }
        }
        const changes = outcomes.flatMap((o) => ('change' in o ? [o.change] : []));
        return [outcomes, changes.length > 0 ? await recordStatusChanges(q, changes) : new Map()] as const;
      });
    } catch (err) {
      // The transaction failed as a whole (nothing of it is committed): alone, each event gets its own
      // fate (before the next group starts, which may hold later events on the same orders).
      if (group.length === 1) group[0].reject(err);
      else {
        // allSettled: this group ends only when every retry has (none is cut short by another's failure);
        // a retry that failed without settling its event gets the error (a settled one ignores it).
        const retries = await Promise.allSettled(group.map((event) => this.commit([event])));
        retries.forEach((retry, i) => {
          if (retry.status === 'rejected') group[i].reject(retry.reason);
        });
      }
      return;
    }
    const accepted = decided.flatMap((d) => ('change' in d ? [d] : []));
    try {
      if (accepted.length > 0) {
        await committed(
          this.deps,
          accepted.map((d) => ({ environment: d.event.environment, keyId: d.key.actsForKeyId })),
        );
      }
    } finally {
      // Committed: every event is answered, whatever happened after the COMMIT.
      for (const d of decided) {
        if ('error' in d) d.event.reject(d.error);
        else d.event.resolve(written.get(d.change.orderId) as PartnerOrderPieces);
      }
    }
  }
}
