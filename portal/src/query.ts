/**
 * Data loading through TanStack Query: one cache for the portal, so screens that read the same thing
 * (the key list, read by six screens) share one request and one answer, refetch it in the background
 * and see a change everywhere once it is invalidated. Every read goes through `useApiQuery`; every
 * change invalidates what it changed (`invalidate`); the realtime channel edits cached pages in place
 * (`setQueryData`) or invalidates what an event changed. A read in flight that may have started before a
 * change never has the last word: the read that follows a change starts after it (`invalidate`,
 * `replaceWebhook`).
 *
 * Rules: no automatic retry (a refused request answers the same again; "Try again" is the screen's,
 * docs/portal.md); an answer stays fresh for 10 s, except what the realtime channel keeps current
 * (`live`), which is read afresh whenever a screen shows it; the cache is emptied when the session
 * ends, so the next account never sees the previous one's data.
 */
import type { PartnerApiError } from '@partner-logistics/sdk/developer';
import type { DeveloperKey, DeveloperWebhook } from '@partner-logistics/sdk/types';
import { keepPreviousData, QueryClient, type QueryKey, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useRef } from 'react';
import { developer, toApiError } from './client';
import { subscribe } from './realtime';
import { getSession, onSessionChange } from './session';

export const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, staleTime: 10_000 } },
});

onSessionChange(() => {
  if (!getSession()) queryClient.clear();
});

/** The query keys: what is read, its parameters last; a prefix names everything under it. */
export const queryKeys = {
  keys: ['developer', 'keys'] as const,
  keyUsage: (keyId: string, days: number) => ['developer', 'keys', keyId, 'usage', days] as const,
  usageOverview: (days: number) => ['developer', 'usage', days] as const,
  sandbox: (keyId: string) => ['developer', 'sandbox', keyId] as const,
  checklist: (keyId: string) => ['developer', 'checklist', keyId] as const,
  webhooks: ['developer', 'webhooks'] as const,
  webhookHealth: (webhookId: string) => ['developer', 'webhook-health', webhookId] as const,
  webhookSecret: (webhookId: string) => ['developer', 'webhook-secret', webhookId] as const,
  webhookDeliveries: (webhookId: string) => ['developer', 'webhook-deliveries', webhookId] as const,
  eventTypes: ['developer', 'event-types'] as const,
  delivery: (deliveryId: string) => ['developer', 'deliveries', deliveryId] as const,
  requests: ['developer', 'requests', 'list'] as const,
  request: (requestId: string) => ['developer', 'requests', requestId] as const,
  requestLogDrops: ['developer', 'requests', 'drops'] as const,
  upload: (uploadId: string) => ['developer', 'uploads', uploadId] as const,
  order: (code: string) => ['developer', 'orders', code] as const,
  paymentIntents: ['developer', 'payment-intents'] as const,
  deliveryHeaders: (deliveryId: string) => ['developer', 'deliveries', deliveryId, 'request-headers'] as const,
  balance: (environment: string) => ['developer', 'payments', 'balance', environment] as const,
  settlements: ['developer', 'settlements'] as const,
  limits: ['developer', 'limits'] as const,
  offers: ['developer', 'offers'] as const,
};

export interface Resource<T> {
  data: T | undefined;
  error: PartnerApiError | null;
  loading: boolean;
  reload: () => Promise<void>;
  /** Edits the cached answer in place (a realtime event, an action's answer). */
  setData: (update: (current: T | undefined) => T | undefined) => void;
}

/**
 * Reads `load` under `queryKey`. `live`: what the realtime channel keeps current is read afresh each time
 * a screen shows it (nothing of an earlier visit is kept: the screen loads as on a first visit), and a
 * screen moving to other parameters (another page, filter or period) keeps showing the last answer until
 * the new one is in.
 */
export function useApiQuery<T>(
  queryKey: QueryKey,
  load: () => Promise<T>,
  options: { live?: boolean; static?: boolean } = {},
): Resource<T> {
  const client = useQueryClient();
  // The same key in a new array each render is the same query: keep one identity per value.
  const stable = useRef(queryKey);
  if (JSON.stringify(stable.current) !== JSON.stringify(queryKey)) stable.current = queryKey;
  const key = stable.current;
  const query = useQuery({
    queryKey: key,
    queryFn: load,
    ...(options.live ? { staleTime: 0, gcTime: 0, placeholderData: keepPreviousData } : {}),
    ...(options.static ? { staleTime: Number.POSITIVE_INFINITY } : {}),
  });
  const reload = useCallback(() => invalidate(key, { exact: true }), [key]);
  const setData = useCallback(
    (update: (current: T | undefined) => T | undefined) => client.setQueryData<T>(key, update),
    [client, key],
  );
  return {
    data: query.data,
    error: query.error ? toApiError(query.error) : null,
    loading: query.isFetching,
    reload,
    setData,
  };
}

/**
 * After a change (an action, a realtime event, a reconnection): every query under `key` (a prefix; with
 * `exact`, that query alone) is read again where it is shown, by a read that starts now, so it holds the
 * change (an event is sent once its change has committed).
 *
 * A read in flight may have started before the change, so it cannot be the last word; but it is let
 * land rather than cancelled (TanStack Query's `cancelRefetch` would restart it), and one read follows
 * it, shared by every change that came meanwhile. Restarted on every change, a read never lands under a
 * stream of events faster than itself: a first read would keep its screen loading, and a screen that
 * holds data would show the old data until the stream paused. This way a screen shows each answer as it
 * lands, at most two reads behind the latest change.
 */
export async function invalidate(key: QueryKey, { exact = false } = {}): Promise<void> {
  const inFlight = queryClient.getQueryCache().findAll({ queryKey: key, exact, fetchStatus: 'fetching' });
  await Promise.all([
    queryClient.invalidateQueries({ queryKey: key, exact, predicate: (q) => !inFlight.includes(q) }),
    ...inFlight.map(async (q) => {
      const one = { queryKey: q.queryKey, exact: true };
      // The read in flight itself (reused, not restarted), then one that starts after it.
      await queryClient.refetchQueries(one, { cancelRefetch: false });
      await queryClient.invalidateQueries(one, { cancelRefetch: false });
    }),
  ]);
}

/** The partner's API keys, shared by every screen that shows or picks one. */
export function useKeys() {
  return useApiQuery(queryKeys.keys, () => developer.keys.list().then((r) => r.items));
}

/**
 * The keys and the webhooks together, read in one go each time a screen shows them (the webhook list and
 * the delivery log group webhooks by key); a webhook's realtime update edits it in place (`replaceWebhook`).
 */
export function useKeysAndWebhooks(): Resource<{ keys: DeveloperKey[]; webhooks: DeveloperWebhook[] }> {
  return useApiQuery(
    queryKeys.webhooks,
    async () => {
      const [keys, webhooks] = await Promise.all([developer.keys.list(), developer.webhooks.list()]);
      return { keys: keys.items, webhooks: webhooks.items };
    },
    { live: true },
  );
}

/** The webhook event catalog (public, the same for everyone): the Events page and every kind picker read it. */
export function useEventCatalog() {
  return useApiQuery(queryKeys.eventTypes, () => developer.eventTypes().then((r) => r.items));
}

/** The limits the API enforces on keys and webhooks (they change only with a deployment: read once per page load). */
export function useLimits() {
  return useApiQuery(queryKeys.limits, () => developer.GET('/v1/developer/limits'), { static: true });
}

/** After a key is created, rotated or revoked: every screen's key list is read again. */
export function invalidateKeys(): Promise<void> {
  return invalidate(queryKeys.keys);
}

/**
 * Puts a webhook's new state (an edit's answer, a realtime update) into the shared list. A read of the
 * list in flight may have started before the change committed and would put the webhook back as it was
 * when it lands. So that read is cancelled first (at once: the list reverts to what it was before the
 * read, which the change then updates), and the list is read again by a read that starts now: it holds the change
 * or something newer, since the answer and the event are sent after the commit. This is TanStack Query's
 * own order for an optimistic update (cancelQueries, setQueryData, then invalidate). A first read in
 * flight has no list to update: it is let land, then read again (`invalidate`).
 */
export function replaceWebhook(webhook: DeveloperWebhook): void {
  const list = { queryKey: queryKeys.webhooks, exact: true };
  const reading = queryClient.isFetching(list) > 0;
  if (reading && queryClient.getQueryData(list.queryKey) !== undefined) void queryClient.cancelQueries(list);
  queryClient.setQueryData<{ keys: DeveloperKey[]; webhooks: DeveloperWebhook[] }>(
    list.queryKey,
    (d) => d && { ...d, webhooks: d.webhooks.map((w) => (w.id === webhook.id ? webhook : w)) },
  );
  if (reading) void invalidate(list.queryKey, { exact: true });
}

/** What the realtime channel changes in the shared cache, whichever screen shows it. Call once at start-up. */
export function followRealtime(): void {
  subscribe('webhook.updated', ({ webhook }) => replaceWebhook(webhook));
  subscribe('delivery.updated', ({ delivery }) => void invalidate(queryKeys.delivery(delivery.id)));
}
