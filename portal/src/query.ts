/**
 * Data loading through TanStack Query: one cache for the portal, so screens that read the same thing
 * (the key list, read by six screens) share one request and one answer, refetch it in the background
 * and see a change everywhere once it is invalidated. `useApiQuery` gives a screen the same shape as
 * `useResource` (hooks.ts): data, error (an ApiError), loading, reload, setData.
 *
 * Rules: no automatic retry (a refused request answers the same again; "Try again" is the screen's,
 * docs/portal.md); an answer stays fresh for 10 s; the cache is emptied when the session ends, so the
 * next account never sees the previous one's data.
 */
import { QueryClient, type QueryKey, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useRef } from 'react';
import { api, getSession, onSessionChange } from './api';
import { type Resource, toApiError } from './hooks';

export const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, staleTime: 10_000 } },
});

onSessionChange(() => {
  if (!getSession()) queryClient.clear();
});

/** The query keys of what several screens read. */
export const queryKeys = {
  keys: ['developer', 'keys'] as const,
  keyUsage: (keyId: string, days: number) => ['developer', 'keys', keyId, 'usage', days] as const,
  eventTypes: ['developer', 'event-types'] as const,
  delivery: (deliveryId: string) => ['developer', 'deliveries', deliveryId] as const,
  request: (requestId: string) => ['developer', 'requests', requestId] as const,
  requestLogDrops: ['developer', 'requests', 'drops'] as const,
};

/** Reads `load` under `key` (an array naming what is read, its parameters last). */
export function useApiQuery<T>(queryKey: QueryKey, load: () => Promise<T>): Resource<T> {
  const client = useQueryClient();
  // The same key in a new array each render is the same query: keep one identity per value.
  const stable = useRef(queryKey);
  if (JSON.stringify(stable.current) !== JSON.stringify(queryKey)) stable.current = queryKey;
  const key = stable.current;
  const query = useQuery({ queryKey: key, queryFn: load });
  const { refetch } = query;
  const reload = useCallback(async () => {
    await refetch();
  }, [refetch]);
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

/** The partner's API keys, shared by every screen that shows or picks one. */
export function useKeys() {
  return useApiQuery(queryKeys.keys, api.listKeys);
}

/** After a key is created, rotated or revoked: every screen's key list is read again. */
export function invalidateKeys(): Promise<void> {
  return queryClient.invalidateQueries({ queryKey: queryKeys.keys });
}
