/**
 * Group commit of partner events (the rules are partner-event-rules.ts).
 *
 * Events that arrive in the same turn of the event loop (many couriers reporting at once) are gathered by
 * src/shared/batcher.ts and written in ONE transaction: their orders are locked in one statement, each through its event's key scope, each
 * event is checked against its locked order exactly as alone, and the accepted ones are written by one
 * statement, then one COMMIT (one WAL flush) answers them all. A refused event (404, 403, 400, 409) is
 * answered with its error and does not stop the others. Nothing is answered before the COMMIT, so an
 * accepted event is as durable as one written alone. If the transaction itself fails (a database error), each of
 * its events is tried again alone, so one event can never fail another. Two events on one order never
 * share a transaction: the later one goes to the next, and then sees the first's outcome, as two
 * requests racing on the row lock always did.
 *
 * Events with an Idempotency-Key (src/shared/idempotency.ts) are written in the same groups: their keys
 * are claimed by one statement sent with the lock, a key already answered replays its stored answer
 * (the event is not judged), and the answers of the claimed ones (the new order as the key sees it, or
 * the refusal) are stored by the write statement itself, sent with the COMMIT, so the answer and the
 * change commit together and a group under keys takes no round trip more than one without. Two
 * events with the same key (same API key, same Idempotency-Key) never share a group either: the later
 * one then finds the first's stored answer. A concurrent duplicate in another process waits for the
 * group's end on the order's row lock (or, for another order, on the key's row) and then replays.
 */
import { lastStatements, together } from '../../db/db.js';
import type { JoinPlans } from '../../db/join-plans.js';
import { AppError } from '../../errors.js';
import { type BatchEntry, Batcher } from '../../shared/batcher.js';
import {
  claimIdempotencyKeys,
  type IdempotencyClaim,
  type IdempotencyScope,
  isStorableError,
  replayedOutcome,
  saveIdempotentResponses,
  storedErrorJson,
} from '../../shared/idempotency.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key.types.js';
import { type NewProof, proofOfEvent, recordProofs } from '../proof/proof-rules.js';
import { commitOrderChange, type OrderChangeDeps, type OrderTx } from './order-change.js';
import { type LockedOrder, lockVisibleOrders } from './order-locks.repo.js';
import { recordStatusChanges, type StatusChange, type StatusChangeAnswers } from './order-writes.repo.js';
import type { CreatePartnerOrderEventDto, PartnerOrder } from './orders.schemas.js';
import { eventTarget, partnerEventChange } from './partner-event-rules.js';
import { type JsonText, orderTextAsSeenBy, type PartnerOrderPieces, scopeOf, seesCustomer } from './visibility.js';

/** Events written by one transaction at most (one statement's arrays). */
const MAX_GROUP = 100;
/**
 * Group transactions under way at once. While one commits, new events gather into the next group:
 * fewer, fuller transactions (the fixed cost of a transaction, its round trips and its WAL flush,
 * shared by more events) rather than many small ones competing for the same CPU. Measured with 10
 * clients on the PostgreSQL server: with 1 in flight a group holds ~5 events (~3.8 when groups may
 * overlap) and an event costs the least CPU (docs/performance.md). Every transaction on orders is
 * short (none waits for a client), so a group never waits long behind another's row lock. A group
 * counts until its COMMIT: its read-cache announcement and answers overlap the next group's transaction.
 */
const MAX_IN_FLIGHT = 1;

export interface PartnerEvent {
  key: ResolvedKey;
  environment: ApiKeyEnvironment;
  code: string;
  body: CreatePartnerOrderEventDto;
  /** The request's Idempotency-Key, scoped to its API key, with the request's hash. */
  idempotency?: IdempotencyScope;
}

/** A successful answer (always 201); refusals, replayed ones included, are thrown. */
export interface PartnerEventResult {
  /** The JSON text of the answer, or (a replay) the stored answer. */
  order: JsonText<PartnerOrder> | PartnerOrder;
  /** True when the answer is the stored answer of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

/** How an event of a group ended: its change, its refusal, or (a repeated Idempotency-Key) the stored answer. */
type Decided =
  | { event: PendingEvent; change: StatusChange }
  | { event: PendingEvent; error: AppError }
  | { event: PendingEvent; replayed: PartnerOrder };

type PendingEvent = BatchEntry<PartnerEvent, PartnerEventResult>;

/** The group-commit writer; one per process (createContext: `ctx.partnerEvents`). */
export class PartnerEventWriter {
  private readonly batcher: Batcher<PartnerEvent, PartnerEventResult>;

  /**
   * `joinPlans`: whether the group's two statements may be prepared (src/db/join-plans.ts); without it
   * they are planned on every call. `answerPlans`: the same for the write statement that also stores
   * the answers of Idempotency-Keys (it joins `idempotency_keys` too).
   */
  constructor(
    private readonly deps: OrderChangeDeps & { clock: { now(): Date }; joinPlans?: JoinPlans; answerPlans?: JoinPlans },
  ) {
    this.batcher = new Batcher({
      maxInFlight: MAX_IN_FLIGHT,
      maxBatch: MAX_GROUP,
      // One event per order and per Idempotency-Key in a transaction; a second one waits for the next group.
      admits: (group, event) => !group.some((e) => e.code === event.code || sameIdempotencyKey(e, event)),
      // The group's slot is given back once its transaction has committed, before the read cache's
      // announcement (a Redis round trip) and the answers: the next group's database work need not wait
      // for them. A group that fails gives it back when its retries are done.
      run: (group, release) => this.commit(group, release),
    });
  }

  /** Writes the event with others of this turn; resolves with its answer once committed. */
  write(event: PartnerEvent): Promise<PartnerEventResult> {
    return this.batcher.add(event);
  }

  /** Writes the group in one transaction (`committed`: called once it has committed, see flush). */
  private async commit(group: PendingEvent[], committed?: () => void): Promise<void> {
    let decided: Decided[];
    let written: Map<string, PartnerOrderPieces>;
    try {
      // commitOrderChange tells the read cache and wakes the outbox consumers after the COMMIT, before
      // any event is answered; nothing after the COMMIT throws, so a failure here is the transaction's.
      // Once the tables have grown the group's statements run prepared, on their generic plans from
      // the first call (Db.tx's genericPlans says why they must be forced).
      const prepare = this.deps.joinPlans?.prepared ?? false;
      const prepareAnswers = prepare && group.some((e) => e.item.idempotency) && (this.deps.answerPlans?.prepared ?? false);
      [decided, written] = await commitOrderChange(this.deps, (tx) => this.writeGroup(group, tx, prepare, prepareAnswers), {
        afterCommit: committed,
        tx: { genericPlans: prepare },
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
    // Committed, announced and woken: every event is answered.
    for (const d of decided) {
      if ('error' in d) d.event.reject(d.error);
      else if ('replayed' in d) d.event.resolve({ order: d.replayed, replayed: true });
      else {
        const pieces = written.get(d.change.orderId) as PartnerOrderPieces;
        d.event.resolve({ order: orderTextAsSeenBy(d.event.item.key, pieces), replayed: false });
      }
    }
  }

  /**
   * The group's transaction: its orders locked in one statement (each through its event's key scope)
   * and its Idempotency-Keys claimed by another sent with it, then the events judged and written, with
   * the claimed keys' answers, by one statement sent with the COMMIT.
   */
  private async writeGroup(
    group: PendingEvent[],
    tx: OrderTx,
    prepare: boolean,
    prepareAnswers: boolean,
  ): Promise<readonly [Decided[], Map<string, PartnerOrderPieces>]> {
    const keyed = group.flatMap((e, i) => (e.item.idempotency ? [i] : []));
    const claimedAt = this.deps.clock.now();
    // A DELIVERED may collect cash: its instant (read below) is read once no settlement of its partner
    // is being made (src/modules/payments/collection-period-lock.ts); the same statement locks the orders.
    const [locked, claimList] = await together(
      tx,
      () =>
        lockVisibleOrders(
          group.map(({ item: e }) => ({ scope: scopeOf(e.key, e.environment), code: e.code })),
          tx,
          group
            .filter((e) => e.item.body.type === 'DELIVERED')
            .map((e) => ({ partnerId: e.item.key.partnerId, environment: e.item.environment })),
          { prepare },
        ),
      async () =>
        keyed.length > 0
          ? claimIdempotencyKeys(
              keyed.map((i) => group[i].item.idempotency as IdempotencyScope),
              claimedAt,
              tx,
            )
          : [],
    );
    const claims = new Map<number, IdempotencyClaim | AppError>(keyed.map((i, n) => [i, claimList[n]]));

    // What is not judged: a repeated key (its stored answer) or a key refused (409).
    const settled = new Map<number, Decided>();
    for (const [i, claim] of claims) {
      if (claim instanceof AppError) settled.set(i, { event: group[i], error: claim });
      else if (claim.kind === 'replay') {
        const outcome = replayedOutcome<PartnerOrder>(claim);
        settled.set(
          i,
          outcome.kind === 'ok' ? { event: group[i], replayed: outcome.answer } : { event: group[i], error: outcome.error },
        );
      }
    }
    // The judged events' keys (if any) are claimed: their answers are stored by the write.
    const judged = group.flatMap((_, i) => (settled.has(i) ? [] : [i]));
    const { outcomes, written } = await applyPartnerEvents(
      judged.map((i) => group[i].item),
      locked,
      this.deps.clock.now(),
      tx,
      { prepare, prepareAnswers, commit: true },
    );
    judged.forEach((i, n) => {
      const o = outcomes[n];
      settled.set(i, 'error' in o ? { event: group[i], error: o.error } : { event: group[i], change: o.change });
    });
    const decided = group.map((_, i) => settled.get(i) as Decided);
    return [decided, written] as const;
  }
}

/** Whether two events carry the same Idempotency-Key of the same API key. */
function sameIdempotencyKey(a: PartnerEvent, b: PartnerEvent): boolean {
  return (
    a.idempotency !== undefined &&
    b.idempotency !== undefined &&
    a.idempotency.apiKeyId === b.idempotency.apiKeyId &&
    a.idempotency.key === b.idempotency.key
  );
}

/** An event judged against its locked order: the change it makes, or its refusal. */
export type PartnerEventOutcome = { change: StatusChange } | { error: AppError };

/**
 * THE write path of partner events (the group's, for one event or many): each event judged against its locked order exactly as
 * alone (`locked`, by code: what the caller locked through the event's key scope), its proof checked
 * (the geofence, 409, on the locked order, whose address came with the lock), and the accepted ones
 * written by ONE statement with their proofs. A refusal (AppError) is that event's outcome and does
 * not stop the others; any other error fails the transaction. An event's `idempotency` must have been
 * claimed in this transaction (claimIdempotencyKeys): its answer (the order as its key sees it, or the
 * refusal) is stored by the same write statement, made from the row it wrote; a refusal that says "try
 * again" (5xx, 429) is never stored, so it fails the transaction, whose events are then tried alone.
 * Returns the outcomes in the events' order and the written orders' new pieces by order id. `commit`:
 * the writes end the transaction, and on a PostgreSQL server (a pipelined transaction, Db.tx) its
 * COMMIT is sent with them instead of after their answers: with the BEGIN sent with the lock, a group
 * takes two round trips, under Idempotency-Keys or not. `prepare`, `prepareAnswers`: whether the write
 * statement runs prepared, without answers to store and with them (src/db/join-plans.ts).
 */
export async function applyPartnerEvents(
  events: readonly PartnerEvent[],
  locked: ReadonlyMap<string, LockedOrder>,
  now: Date,
  tx: OrderTx,
  options: { prepare?: boolean; prepareAnswers?: boolean; commit?: boolean } = {},
): Promise<{ outcomes: PartnerEventOutcome[]; written: Map<string, PartnerOrderPieces> }> {
  const outcomes: PartnerEventOutcome[] = [];
  const proofs: NewProof[] = [];
  const answers: StatusChangeAnswers = { written: [], made: [] };
  for (const { key, environment, code, body, idempotency } of events) {
    const found = eventTarget(key, environment, code, locked.get(code) ?? null, tx);
    const target = found instanceof Promise ? await found : found;
    try {
      const change = partnerEventChange(target, body, now);
      const proof = target.order ? proofOfEvent(target.key, target.order, body, now) : null;
      if (proof) proofs.push(proof);
      outcomes.push({ change });
      tx.changed({ environment, keyIds: [target.key.actsForKeyId] });
      if (idempotency) {
        answers.written.push({
          orderId: change.orderId,
          apiKeyId: idempotency.apiKeyId,
          key: idempotency.key,
          pii: seesCustomer(key),
        });
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      outcomes.push({ error: err });
      if (idempotency) {
        if (!isStorableError(err)) throw err;
        answers.made.push({ scope: idempotency, statusCode: err.statusCode, json: storedErrorJson(err) });
      }
    }
  }
  const changes = outcomes.flatMap((o) => ('change' in o ? [o.change] : []));
  const storing = answers.written.length + answers.made.length > 0;
  const write = async () => {
    if (changes.length > 0) {
      return recordStatusChanges(
        changes,
        tx,
        storing ? { prepare: options.prepareAnswers, answers } : { prepare: options.prepare },
      );
    }
    // Nothing accepted: only refusals' answers to store.
    if (storing) await saveIdempotentResponses(answers.made, tx);
    return new Map<string, PartnerOrderPieces>();
  };
  const prove = async () => (proofs.length > 0 ? recordProofs(proofs, tx) : undefined);
  if (options.commit) {
    const [written] = await lastStatements(tx, write, prove);
    return { outcomes, written };
  }
  const written = await write();
  await prove();
  return { outcomes, written };
}
