/**
 * SQL of the usage counters (table api_key_usage: one row per key per UTC day). Rows are reached by key
 * id: callers have already established that the key is the caller's own (the authenticated key, or a
 * key found through the partner-scoped keys repo).
 */
import type { Queryable } from '../../db/db.js';
import type { DailyUsage } from './usage.types.js';

export interface UsageIncrement extends DailyUsage {
  keyId: string;
  /** The latest request in the batch that the key was accepted for, for its lastUsedAt (null: none). */
  lastUsedMs: number | null;
}

/**
 * Adds a batch of counters (additive upsert, so several processes can flush the same rows). Callers
 * pass the batch sorted by key and day so concurrent flushes of several processes lock rows in one
 * order; should PostgreSQL still pick one as a deadlock victim, its counts are retried.
 */
export async function addUsage(batch: readonly UsageIncrement[], q: Queryable): Promise<void> {
  if (batch.length === 0) return;
  await q.query(
    `INSERT INTO api_key_usage (api_key_id, day, requests, client_errors, server_errors)
     SELECT k, d::date, r, c, s FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::int[]) AS t(k, d, r, c, s)
     ON CONFLICT (api_key_id, day) DO UPDATE SET
       requests = api_key_usage.requests + EXCLUDED.requests,
       client_errors = api_key_usage.client_errors + EXCLUDED.client_errors,
       server_errors = api_key_usage.server_errors + EXCLUDED.server_errors`,
    [
      batch.map((c) => c.keyId),
      batch.map((c) => c.day),
      batch.map((c) => c.requests),
      batch.map((c) => c.clientErrors),
      batch.map((c) => c.serverErrors),
    ],
  );
}

/** The stored counters of one key from `fromDay` to `toDay` (inclusive, `YYYY-MM-DD`). */
export async function readUsage(keyId: string, fromDay: string, toDay: string, q: Queryable): Promise<DailyUsage[]> {
  const rows = await q.query<{ day: string; requests: number; client_errors: number; server_errors: number }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, requests, client_errors, server_errors
       FROM api_key_usage
      WHERE api_key_id = $1 AND day BETWEEN $2::date AND $3::date`,
    [keyId, fromDay, toDay],
  );
  return rows.map((r) => ({ day: r.day, requests: r.requests, clientErrors: r.client_errors, serverErrors: r.server_errors }));
}

/** The stored counters of several keys from `fromDay` to `toDay` (inclusive), by key. */
export async function readUsageOfKeys(
  keyIds: readonly string[],
  fromDay: string,
  toDay: string,
  q: Queryable,
): Promise<Map<string, DailyUsage[]>> {
  const rows = await q.query<{ key_id: string; day: string; requests: number; client_errors: number; server_errors: number }>(
    `SELECT api_key_id AS key_id, to_char(day, 'YYYY-MM-DD') AS day, requests, client_errors, server_errors
       FROM api_key_usage
      WHERE api_key_id = ANY($1::uuid[]) AND day BETWEEN $2::date AND $3::date`,
    [keyIds, fromDay, toDay],
  );
  const byKey = new Map<string, DailyUsage[]>(keyIds.map((id) => [id, []]));
  for (const r of rows) {
    byKey.get(r.key_id)?.push({ day: r.day, requests: r.requests, clientErrors: r.client_errors, serverErrors: r.server_errors });
  }
  return byKey;
}

/** Deletes the counters of days before `firstKeptDay`; returns how many rows went. */
export async function deleteUsageBefore(firstKeptDay: string, q: Queryable): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `WITH gone AS (DELETE FROM api_key_usage WHERE day < $1::date RETURNING 1) SELECT count(*)::int AS n FROM gone`,
    [firstKeptDay],
  );
  return rows[0].n;
}
