import { type DependencyList, useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './api';

export interface Resource<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload: () => Promise<void>;
  setData: (update: (current: T | undefined) => T | undefined) => void;
}

/** Loads `load()` when `deps` change; keeps the last data while reloading; ignores stale answers. */
export function useResource<T>(load: () => Promise<T>, deps: DependencyList): Resource<T> {
  const [data, setDataState] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const run = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const result = await load();
      if (mine !== generation.current) return;
      setDataState(result);
      setError(null);
    } catch (err) {
      if (mine !== generation.current) return;
      setError(toApiError(err));
    } finally {
      if (mine === generation.current) setLoading(false);
    }
    // biome-ignore lint/correctness/useExhaustiveDependencies: the caller lists what `load` depends on
  }, deps);

  useEffect(() => {
    void run();
  }, [run]);

  const setData = useCallback((update: (current: T | undefined) => T | undefined) => setDataState(update), []);
  return { data, error, loading, reload: run, setData };
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError(0, 'ERR_CLIENT', err instanceof Error ? err.message : 'Something went wrong.');
}

/** Runs an action, tracking whether it is busy and its error. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = useCallback(
    async (...args: A): Promise<R | undefined> => {
      setBusy(true);
      setError(null);
      try {
        return await action(...args);
      } catch (err) {
        setError(toApiError(err));
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [action],
  );
  return { run, busy, error, setError };
}

/** Calls `fn` at most once per `ms` for a burst of triggers (the last trigger always gets its call). */
export function useCoalesced(fn: () => void, ms: number): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      latest.current();
    }, ms);
  }, [ms]);
}

/** Clears an action's error when a later action of the page succeeds (`succeeded` counts them). */
export function useClearedOnSuccess(succeeded: number, clear: () => void): void {
  const latest = useRef(clear);
  latest.current = clear;
  const seen = useRef(succeeded);
  useEffect(() => {
    if (succeeded !== seen.current) latest.current();
    seen.current = succeeded;
  }, [succeeded]);
}
