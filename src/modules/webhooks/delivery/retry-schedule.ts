/**
 * The retry schedule (docs/decisions-log.md, 'Webhooks'): the first attempt at once, then retries 1 min,
 * 5 min, 30 min, 2 h and 12 h after each failure: six attempts in all, after which a delivery is DEAD.
 * Times are on the service clock, so the test clock walks a delivery through the whole schedule.
 */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 12 * 3_600_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

export type FailureOutcome = { status: 'FAILED'; nextAttemptAtMs: number } | { status: 'DEAD'; nextAttemptAtMs: null };

/** What a failed attempt leads to, given how many attempts have now been made (1-based). */
export function afterFailedAttempt(attemptsMade: number, nowMs: number): FailureOutcome {
  if (attemptsMade >= MAX_ATTEMPTS) return { status: 'DEAD', nextAttemptAtMs: null };
  return { status: 'FAILED', nextAttemptAtMs: nowMs + RETRY_DELAYS_MS[Math.max(0, attemptsMade - 1)] };
}

/** consecutiveFailures at which a webhook is switched off (docs/decisions-log.md, 'Webhooks'). */
export const AUTO_DISABLE_AFTER_DEAD = 50;
