import { useCallback, useEffect, useRef } from 'react';

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
