/**
 * The go-live checklist of a sandbox key (docs/decisions-log.md, 'Sandbox simulator and go-live checklist'): what its integration has proven, computed
 * from what it really did, never from what it says. Each item is done from the first moment its
 * condition was met (`doneAt`), and not before.
 *
 * A checklist follows the integration across key rotations, as orders and webhooks do: a key's
 * lineage is every key of its rotation chain, and the evidence is that of the chain (the partner events
 * its keys sent on the orders the chain now holds, the deliveries of the webhooks it now holds, the
 * requests its keys made). A rotated-out key and its successor therefore show the same checklist.
 *
 * Cost: a handful of statements whatever the number of keys (a partner's keys, then each kind of
 * evidence for all their lineages at once), every one an index range of the keys' own rows.
 */
import type { Db } from '../../db/db.js';
import { AppError, notFound } from '../../errors.js';
import { isUuid } from '../../shared/ids.js';
import type { WebhookEvent } from '../../shared/schemas.js';
import { partnerEventStatus, platformMovesFrom } from '../orders/state-machine.js';
import type { ProofPolicy } from '../partners/partners.schemas.js';
import {
  type EventEvidence,
  type LineageMember,
  listPartnerKeyLineage,
  type PartnerKeyRow,
  partnerEventEvidence,
  readMarks,
  webhookEvidence,
  writeMarks,
} from './checklist.repo.js';
import { NO_PROOF_EVIDENCE, type ProofEvidence, partnerProofPolicy, proofEvidence } from './proof-evidence.js';
import { NO_REQUEST_EVIDENCE, type RequestEvidence, requestEvidence } from './request-evidence.js';
import type { ChecklistItem, GoLiveChecklist, PartnerChecklists } from './sandbox.schemas.js';
import { SANDBOX_START_STATUSES } from './sandbox.schemas.js';

export interface ChecklistDeps {
  db: Db;
  /** The request log's writer: flushed first, so this process's latest requests count at once. */
  requestLog: { flush(): Promise<void> };
}

/** Everything the items are judged on, for one lineage. */
interface Evidence {
  requests: RequestEvidence;
  events: EventEvidence;
  /** When a webhook first answered 2xx, by event type. */
  webhooks: Map<string, Date>;
  proof: ProofEvidence;
}

interface ItemDefinition {
  id: string;
  title: string;
  hint: string;
  doneAt: (evidence: Evidence) => Date | null;
}

const EVENTS = 'POST /v1/partner/orders/{code}/events';
const cancellable = SANDBOX_START_STATUSES.filter((s) => platformMovesFrom(s).includes('CANCELLED')).join(', ');

function webhookItem(type: WebhookEvent, id: string, trigger: string): ItemDefinition {
  return {
    id,
    title: `A webhook answered 2xx to ${type}`,
    hint: `Subscribe a webhook of this key to ${type} and answer its deliveries with a 2xx status; then ${trigger}. Test samples do not count.`,
    doneAt: (e) => e.webhooks.get(type) ?? null,
  };
}

/** The items, in the order the contract lists them (docs/decisions-log.md, 'Sandbox simulator and go-live checklist'). */
const ITEMS: ItemDefinition[] = [
  {
    id: 'orders-listed-updated-since',
    title: 'Listed orders with updatedSince',
    hint: 'GET /v1/partner/orders?updatedSince=<ISO 8601 time> with this key, answered 200: the incremental sync a poller runs.',
    doneAt: (e) => e.requests.listedUpdatedSince,
  },
  {
    id: 'event-picked-up',
    title: 'Sent PICKED_UP',
    hint: `${EVENTS} {"type":"PICKED_UP"} on a PACKED order of this key.`,
    doneAt: (e) => e.events.pickedUp,
  },
  {
    id: 'event-en-route',
    title: 'Sent EN_ROUTE',
    hint: `${EVENTS} {"type":"EN_ROUTE"} on a SCANNED_TO_VAN (or PACKED) order of this key.`,
    doneAt: (e) => e.events.enRoute,
  },
  {
    id: 'event-delivered-exact-cod',
    title: 'Sent DELIVERED with the exact COD amount',
    hint: `${EVENTS} {"type":"DELIVERED","codCollectedQepik":<the order's codAmountQepik>} on an EN_ROUTE cash-on-delivery (COD) order.`,
    doneAt: (e) => e.events.deliveredExactCod,
  },
  {
    id: 'event-delivered-cod-variance',
    title: 'Sent DELIVERED with a COD variance and a note',
    hint: `${EVENTS} {"type":"DELIVERED","codCollectedQepik":<less than codAmountQepik>,"note":"<why>"} on an EN_ROUTE COD order (without the note: 400 ERR_COD_VARIANCE_NOTE_REQUIRED).`,
    doneAt: (e) => e.events.deliveredCodVariance,
  },
  {
    id: 'event-failed-with-reason',
    title: 'Sent FAILED with a reason',
    hint: `${EVENTS} {"type":"FAILED","failReason":"NOT_HOME"} on an EN_ROUTE order (any DeliveryFailReason).`,
    doneAt: (e) => e.events.failedWithReason,
  },
  {
    id: 'event-en-route-after-failed',
    title: 'Sent EN_ROUTE again after FAILED',
    hint: `${EVENTS} {"type":"EN_ROUTE"} on a FAILED order: the next delivery attempt (after 3 failed attempts: 409 ERR_DELIVERY_RETRY_LIMIT).`,
    doneAt: (e) => e.events.enRouteAfterFailed,
  },
  {
    id: 'event-idempotent-repeat',
    title: 'Repeated an event with the same Idempotency-Key',
    hint: `Send one event (${EVENTS}) twice with the same Idempotency-Key header and the same body, both answered 201: the repeat answers the first answer again (Idempotent-Replayed: true) and changes nothing.`,
    doneAt: (e) => e.requests.idempotentRepeat,
  },
  webhookItem(
    'order.assigned_to_partner',
    'webhook-order-assigned-to-partner',
    'create a test order (POST /v1/partner/sandbox/orders)',
  ),
  webhookItem('order.status_changed', 'webhook-order-status-changed', 'move an order: a partner event or a marketplace move'),
  webhookItem('order.delivered', 'webhook-order-delivered', 'deliver an order (a DELIVERED event)'),
  webhookItem(
    'order.cancelled',
    'webhook-order-cancelled',
    `cancel a ${cancellable} order as the marketplace: POST /v1/partner/sandbox/orders/{code}/platform-status {"status":"CANCELLED"}`,
  ),
  webhookItem(
    'batch.completed',
    'webhook-batch-completed',
    'put orders on a van batch (POST /v1/partner/sandbox/batches) and move it to DISPATCHED, then COMPLETED (POST /v1/partner/sandbox/batches/{code}/status)',
  ),
];

/** Shown only when the partner's proof policy asks for proof (docs/tracking-and-proof.md, "Sandbox"). */
const PROOF_ITEMS: ItemDefinition[] = [
  {
    id: 'locations-sent',
    title: 'Sent courier locations',
    hint: 'POST /v1/partner/orders/{code}/locations {"points":[{"lat":…,"lng":…,"accuracyM":…,"at":"<ISO 8601 time>"}]} on a SCANNED_TO_VAN or EN_ROUTE order of this key (partner trigger courier does it).',
    doneAt: (e) => e.proof.sentLocations,
  },
  {
    id: 'event-delivered-with-proof',
    title: 'Sent DELIVERED with proof',
    hint: `${EVENTS} {"type":"DELIVERED","proof":{"location":{"lat":…,"lng":…,"accuracyM":…},"photoIds":["upl_…"]}} within the geofence of the order's address, with the photos your proof policy asks for (POST /v1/partner/uploads).`,
    doneAt: (e) => e.proof.deliveredWithProof,
  },
];

/** The items of keys holding payments:read (docs/payments.md, "Sandbox"), after the others. */
const PAYMENT_ITEMS: ItemDefinition[] = [
  {
    id: 'payment-intents-listed-updated-since',
    title: 'Listed payment intents with updatedSince',
    hint: 'GET /v1/partner/payment-intents?updatedSince=<ISO 8601 time> with this key, answered 200: the incremental sync of payments.',
    doneAt: (e) => e.requests.listedIntentsUpdatedSince,
  },
  {
    id: 'settlement-lines-read',
    title: "Read a settlement's lines",
    hint: 'GET /v1/partner/settlements/{id}/lines (or lines.csv) with this key, answered 200. Close a sandbox period first: POST /v1/partner/sandbox/settlements.',
    doneAt: (e) => e.requests.readSettlementLines,
  },
  webhookItem(
    'settlement.created',
    'webhook-settlement-created',
    'deliver a COD order and close a sandbox period (POST /v1/partner/sandbox/settlements)',
  ),
];

/**
 * The items of a key: every key's, then the proof items when its partner's proof policy asks for proof,
 * then the payment items for a key holding payments:read.
 */
function itemsFor(scopes: readonly string[], policy: ProofPolicy): ItemDefinition[] {
  return [...ITEMS, ...(policy === 'NONE' ? [] : PROOF_ITEMS), ...(scopes.includes('payments:read') ? PAYMENT_ITEMS : [])];
}

const WEBHOOK_TYPES: WebhookEvent[] = [
  'order.assigned_to_partner',
  'order.status_changed',
  'order.delivered',
  'order.cancelled',
  'batch.completed',
  'settlement.created',
];

const NO_EVENTS: EventEvidence = {
  pickedUp: null,
  enRoute: null,
  deliveredExactCod: null,
  deliveredCodVariance: null,
  failedWithReason: null,
  enRouteAfterFailed: null,
};

/** The key each key acts for: the newest of its rotation chain among the partner's keys. */
function actsForOf(keys: PartnerKeyRow[]): Map<string, string> {
  const byId = new Map(keys.map((k) => [k.id, k]));
  const out = new Map<string, string>();
  for (const key of keys) {
    let at = key;
    for (let depth = 0; depth < 100 && at.successorId !== null; depth++) {
      const next = byId.get(at.successorId);
      if (!next) break;
      at = next;
    }
    out.set(key.id, at.id);
  }
  return out;
}

/** The checklists of `wanted` (sandbox keys of the partner whose keys are `keys`), in that order. */
async function checklistsOf(
  deps: ChecklistDeps,
  partnerId: string,
  wanted: PartnerKeyRow[],
  keys: PartnerKeyRow[],
): Promise<GoLiveChecklist[]> {
  const actsFor = actsForOf(keys);
  const policy = await partnerProofPolicy(partnerId, deps.db);
  const lineageOf = (keyId: string) => actsFor.get(keyId) ?? keyId;
  const lineages = new Set(wanted.map((k) => lineageOf(k.id)));
  // Every key of every wanted lineage: the partner events, requests and marks of any of them count.
  const members: LineageMember[] = keys.flatMap((k) =>
    lineages.has(lineageOf(k.id)) ? [{ keyId: k.id, actsForKeyId: lineageOf(k.id) }] : [],
  );

  // What was seen before, per lineage and item (the earliest time).
  const marked = new Map<string, Map<string, Date>>();
  for (const mark of await readMarks(
    members.map((m) => m.keyId),
    deps.db,
  )) {
    const lineage = lineageOf(mark.keyId);
    const items = marked.get(lineage) ?? new Map<string, Date>();
    const seen = items.get(mark.item);
    if (!seen || mark.doneAt < seen) items.set(mark.item, mark.doneAt);
    marked.set(lineage, items);
  }
  // The evidence is read only for lineages with an item still open.
  const scopesOf = (lineage: string) => keys.find((k) => k.id === lineage)?.scopes ?? [];
  const open = new Set([...lineages].filter((l) => itemsFor(scopesOf(l), policy).some((item) => !marked.get(l)?.has(item.id))));
  const openMembers = members.filter((m) => open.has(m.actsForKeyId));
  const [events, webhooks, requests, proofs] = await Promise.all([
    partnerEventEvidence(
      openMembers,
      {
        pickedUp: partnerEventStatus('PICKED_UP'),
        enRoute: partnerEventStatus('EN_ROUTE'),
        delivered: partnerEventStatus('DELIVERED'),
        failed: partnerEventStatus('FAILED'),
      },
      deps.db,
    ),
    webhookEvidence(partnerId, [...open], WEBHOOK_TYPES, deps.db),
    requestEvidence(openMembers, deps.db),
    proofEvidence(partnerId, [...open], policy, deps.db),
  ]);

  const found: Array<{ keyId: string; item: string; doneAt: Date }> = [];
  const itemsOf = new Map<string, ChecklistItem[]>();
  for (const lineage of lineages) {
    const evidence: Evidence = {
      events: events.get(lineage) ?? NO_EVENTS,
      webhooks: webhooks.get(lineage) ?? new Map(),
      requests: requests.get(lineage) ?? NO_REQUEST_EVIDENCE,
      proof: proofs.get(lineage) ?? NO_PROOF_EVIDENCE,
    };
    const seen = marked.get(lineage);
    itemsOf.set(
      lineage,
      itemsFor(scopesOf(lineage), policy).map((item) => {
        let at = seen?.get(item.id) ?? null;
        if (at === null) {
          at = open.has(lineage) ? item.doneAt(evidence) : null;
          if (at !== null) found.push({ keyId: lineage, item: item.id, doneAt: at });
        }
        return { id: item.id, title: item.title, done: at !== null, doneAt: at ? at.toISOString() : null, hint: item.hint };
      }),
    );
  }
  await writeMarks(found, deps.db);
  return wanted.map((key) => {
    const items = itemsOf.get(lineageOf(key.id)) ?? [];
    return { apiKeyId: key.id, complete: items.every((i) => i.done), items };
  });
}

/** Writes this process's logged requests now; a failed flush keeps them for the next and must not fail the route. */
async function flushRequestLog(deps: ChecklistDeps): Promise<void> {
  await deps.requestLog.flush().catch(() => {});
}

/** GET /v1/developer/keys/{id}/checklist: another partner's key 404, a live key 409 ERR_CONFLICT. */
export async function keyChecklist(deps: ChecklistDeps, partnerId: string, keyId: string): Promise<GoLiveChecklist> {
  if (!isUuid(keyId)) throw notFound('API key');
  const keys = (await listPartnerKeyLineage(partnerId, deps.db)) ?? [];
  const key = keys.find((k) => k.id === keyId);
  if (!key) throw notFound('API key');
  if (key.environment !== 'SANDBOX') {
    throw new AppError('ERR_CONFLICT', 'This is a live key; the go-live checklist is computed for sandbox keys');
  }
  await flushRequestLog(deps);
  return (await checklistsOf(deps, partnerId, [key], keys))[0];
}

/** GET /v1/admin/partners/{id}/checklist: every sandbox key of the partner, newest first. */
export async function partnerChecklists(deps: ChecklistDeps, partnerId: string): Promise<PartnerChecklists> {
  if (!isUuid(partnerId)) throw notFound('Partner');
  const keys = await listPartnerKeyLineage(partnerId, deps.db);
  if (keys === null) throw notFound('Partner');
  const sandbox = keys.filter((k) => k.environment === 'SANDBOX');
  await flushRequestLog(deps);
  return { items: sandbox.length === 0 ? [] : await checklistsOf(deps, partnerId, sandbox, keys) };
}

/** The item ids, in order (tests and the portal's links); a key with payments:read has the payment items after them. */
export const CHECKLIST_ITEM_IDS = ITEMS.map((i) => i.id);
export const PAYMENT_CHECKLIST_ITEM_IDS = PAYMENT_ITEMS.map((i) => i.id);
