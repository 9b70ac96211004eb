import type { PartnerApiError } from '@partner-logistics/sdk/developer';
import { useCallback, useEffect, useRef, useState } from 'react';
import { toApiError } from './client';

/** Runs an action, tracking whether it is busy and its error. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<PartnerApiError | null>(null);
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
