/**
 * The webhook event kinds as the portal offers them (docs/portal.md, "Event kinds"): every kind the
 * event catalog (`GET /v1/developer/event-types`) lists, never a list of the portal's own, so a kind the
 * API adds is offered at once. Kinds are grouped by what they are about, in the order an order meets
 * them; payment and settlement kinds are offered only to keys holding `payments:read`, as the API
 * requires (docs/payments.md, "Webhooks and realtime").
 */
import type { ApiKeyScope, EventTypeItem } from '@partner-logistics/sdk/types';

/** A kind as a picker shows it: its name and the first sentence of the catalog's description. */
export interface EventKindOption {
  type: string;
  meaning: string;
}

export interface EventKindGroup {
  label: string;
  kinds: EventKindOption[];
}

/** The order of an order's life, as a partner meets it; `order.placed` (all-orders keys only) and `ping` (a test) last. */
const LIFECYCLE = [
  'order.assigned_to_partner',
  'order.status_changed',
  'order.delivered',
  'order.cancelled',
  'batch.completed',
  'order.placed',
  'order.courier_location',
  'payment_intent.succeeded',
  'payment_intent.collected',
  'payment_intent.refunded',
  'payment_intent.canceled',
  'settlement.created',
  'settlement.updated',
  'settlement.settled',
  'ping',
];

/** Catalog items in the order of an order's life; kinds not in LIFECYCLE after them, in the API's order. */
export function lifecycleOrder<T extends { type: string }>(items: readonly T[]): T[] {
  const rank = (type: string) => (LIFECYCLE.includes(type) ? LIFECYCLE.indexOf(type) : LIFECYCLE.length);
  return items
    .map((item, i) => ({ item, i }))
    .sort((a, b) => rank(a.item.type) - rank(b.item.type) || a.i - b.i)
    .map(({ item }) => item);
}

/** Payment and settlement kinds: only for keys with `payments:read`. */
export function needsPaymentsScope(type: string): boolean {
  return type.startsWith('payment_intent.') || type.startsWith('settlement.');
}

/** What a kind is about, for grouping. */
function groupOf(type: string): string {
  if (type === 'order.courier_location') return 'Courier tracking';
  if (type.startsWith('order.') || type.startsWith('batch.')) return 'Orders';
  if (type.startsWith('offer.')) return 'Offers';
  if (type.startsWith('payment_intent.')) return 'Payments';
  if (type.startsWith('settlement.')) return 'Settlements';
  return 'Other events';
}

const GROUP_ORDER = ['Orders', 'Offers', 'Courier tracking', 'Payments', 'Settlements', 'Other events'];

/** The first sentence of a catalog description. */
export const firstSentence = (text: string) => text.split(/(?<=\.)\s/)[0] ?? text;

/** The subscribable kinds of the catalog (not `ping`) a key with these scopes may receive, in lifecycle order. */
export function kindsForKey(catalog: readonly EventTypeItem[], scopes: readonly ApiKeyScope[]): EventKindOption[] {
  const paymentsRead = scopes.includes('payments:read');
  return lifecycleOrder(catalog)
    .filter((item) => item.type !== 'ping' && (paymentsRead || !needsPaymentsScope(item.type)))
    .map((item) => ({ type: item.type, meaning: firstSentence(item.description) }));
}

/**
 * The kinds a form shows: those offered, then any kind `held` (what the webhook is subscribed to now)
 * that is not offered (a kind the catalog no longer lists, or a payment kind of a key without
 * `payments:read`), so an edit shows, and sends back, every kind the webhook has.
 */
export function kindsShown(offered: readonly EventKindOption[], held: readonly string[]): EventKindOption[] {
  const known = new Set(offered.map((k) => k.type));
  const extra = held
    .filter((type) => !known.has(type))
    .map((type) => ({
      type,
      meaning: needsPaymentsScope(type)
        ? 'Needs payments:read, which this key lacks: the API refuses a save that keeps it.'
        : 'Not in the event catalog.',
    }));
  return [...offered, ...extra];
}

/** Kinds in their groups, groups in a fixed order, empty groups left out. */
export function groupKinds(kinds: readonly EventKindOption[]): EventKindGroup[] {
  const groups = new Map<string, EventKindOption[]>();
  for (const kind of kinds) {
    const label = groupOf(kind.type);
    groups.set(label, [...(groups.get(label) ?? []), kind]);
  }
  return GROUP_ORDER.filter((label) => groups.has(label)).map((label) => ({ label, kinds: groups.get(label) ?? [] }));
}
