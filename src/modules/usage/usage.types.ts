/**
 * What the rest of the service needs from the usage counters (implementation: usage-recorder.ts):
 * the partner authentication records every request, `GET /v1/partner/me` and the key usage routes read
 * the series.
 */

/** Counters of one key for one UTC day. */
export interface DailyUsage {
  /** UTC calendar day, `YYYY-MM-DD`. */
  day: string;
  requests: number;
  /** 4xx answers, 429 included. */
  clientErrors: number;
  /** 5xx answers. */
  serverErrors: number;
}

/** Per-key per-UTC-day request counters, aggregated in memory and flushed in batches. */
export interface UsageRecorder {
  /**
   * Counts one partner request made with `keyId`, whatever its outcome. `used`: the key was accepted
   * (not revoked, of this listener's environment); only such a request moves the key's `lastUsedAt`.
   */
  record(keyId: string, statusCode: number, used: boolean): void;
  /**
   * The last `days` UTC days of `keyId` (zero-filled, oldest first, ending today by the clock).
   * Exact for everything this process recorded (flushed rows plus counts not yet flushed); rows other
   * processes flushed show within a second. `fresh` skips the short snapshot cache.
   * Answers at once (no promise) when a fresh snapshot is at hand.
   */
  series(keyId: string, days: number, options?: { fresh?: boolean }): DailyUsage[] | Promise<DailyUsage[]>;
  /** Writes everything aggregated so far. */
  flush(): Promise<void>;
  /** Stops the periodic flush after a final flush. */
  stop(): Promise<void>;
}
