/**
 * Webhook endpoints. Every function that reads partner data takes the partner id first and filters by
 * it; the Queryable (pool or transaction) comes last.
 */
import type { Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment, ApiKeyScope, WebhookEvent } from '../../shared/schemas.js';
import type { DeveloperWebhook } from './webhooks.schemas.js';

interface WebhookRow {
  id: string;
  partner_id: string;
  api_key_id: string;
  url: string;
  events: WebhookEvent[];
  secret_ciphertext: string;
  is_active: boolean;
  consecutive_failures: number;
  created_at: Date;
}

/** A webhook together with the key it acts for (scope checks, ping environment). */
export interface WebhookWithKey {
  webhook: DeveloperWebhook;
  partnerId: string;
  keyScopes: ApiKeyScope[];
  keyEnvironment: ApiKeyEnvironment;
  /** The current signing secret, encrypted (secrets.decrypt). */
  secretCiphertext: string;
}

const COLUMNS =
  'w.id, w.partner_id, w.api_key_id, w.url, w.events, w.secret_ciphertext, w.is_active, w.consecutive_failures, w.created_at';

/**
 * A webhook as DeveloperWebhook, built by PostgreSQL (for statements that change a webhook on the side,
 * such as the worker's outcome writes, and announce it: webhook.updated).
 */
export function webhookJsonSql(alias: string): string {
  const a = alias;
  return `json_build_object('id', ${a}.id, 'apiKeyId', ${a}.api_key_id, 'url', ${a}.url, 'events', ${a}.events,
    'isActive', ${a}.is_active, 'consecutiveFailures', ${a}.consecutive_failures,
    'createdAt', to_char(${a}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
}

export function toDeveloperWebhook(row: WebhookRow): DeveloperWebhook {
  return {
    id: row.id,
    apiKeyId: row.api_key_id,
    url: row.url,
    events: row.events,
    isActive: row.is_active,
    consecutiveFailures: row.consecutive_failures,
    createdAt: row.created_at.toISOString(),
  };
}

export async function listWebhooks(partnerId: string, q: Queryable): Promise<DeveloperWebhook[]> {
  const rows = await q.query<WebhookRow>(
    `SELECT ${COLUMNS} FROM webhooks w WHERE w.partner_id = $1 ORDER BY w.created_at, w.id`,
    [partnerId],
  );
  return rows.map(toDeveloperWebhook);
}

export async function countWebhooksOfKey(partnerId: string, keyId: string, q: Queryable): Promise<number> {
  const rows = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks WHERE partner_id = $1 AND api_key_id = $2', [
    partnerId,
    keyId,
  ]);
  return rows[0].n;
}

export async function insertWebhook(
  partnerId: string,
  input: { id: string; apiKeyId: string; url: string; events: WebhookEvent[]; secretCiphertext: string; now: Date },
  q: Queryable,
): Promise<DeveloperWebhook> {
  const rows = await q.query<WebhookRow>(
    `INSERT INTO webhooks AS w (id, partner_id, api_key_id, url, events, secret_ciphertext, is_active, consecutive_failures, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, true, 0, $7, $7)
     RETURNING ${COLUMNS}`,
    [input.id, partnerId, input.apiKeyId, input.url, input.events, input.secretCiphertext, input.now],
  );
  return toDeveloperWebhook(rows[0]);
}

/**
 * The partner's webhook and its key. `lock: true` takes the row for an update or delete; `lock: 'share'`
 * keeps it from being deleted until the transaction ends (what inserting a delivery that references it
 * needs: a DELETE waits, or has already happened and the webhook is not found; updates and the worker's
 * claims are not held up).
 */
export async function findWebhookWithKey(
  partnerId: string,
  webhookId: string,
  q: Queryable,
  options: { lock?: boolean | 'share' } = {},
): Promise<WebhookWithKey | null> {
  const lock = options.lock === 'share' ? ' FOR KEY SHARE OF w' : options.lock ? ' FOR NO KEY UPDATE OF w' : '';
  const rows = await q.query<WebhookRow & { key_scopes: ApiKeyScope[]; key_environment: ApiKeyEnvironment }>(
    `SELECT ${COLUMNS}, k.scopes AS key_scopes, k.environment AS key_environment
       FROM webhooks w JOIN api_keys k ON k.id = w.api_key_id
      WHERE w.partner_id = $1 AND w.id = $2${lock}`,
    [partnerId, webhookId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    webhook: toDeveloperWebhook(row),
    partnerId: row.partner_id,
    keyScopes: row.key_scopes,
    keyEnvironment: row.key_environment,
    secretCiphertext: row.secret_ciphertext,
  };
}

export async function updateWebhook(
  partnerId: string,
  webhookId: string,
  patch: { url?: string; events?: WebhookEvent[]; isActive?: boolean; now: Date },
  q: Queryable,
): Promise<DeveloperWebhook | null> {
  // Switching a webhook on also clears its failure streak (docs/decisions-log.md, 'Webhooks'); switching it off keeps it, so
  // the log shows why it was off.
  const rows = await q.query<WebhookRow>(
    `UPDATE webhooks w SET
        url = COALESCE($3, url),
        events = COALESCE($4::text[], events),
        is_active = COALESCE($5, is_active),
        consecutive_failures = CASE WHEN $5 IS TRUE THEN 0 ELSE consecutive_failures END,
        updated_at = $6
      WHERE w.partner_id = $1 AND w.id = $2
      RETURNING ${COLUMNS}`,
    [partnerId, webhookId, patch.url ?? null, patch.events ?? null, patch.isActive ?? null, patch.now],
  );
  return rows[0] ? toDeveloperWebhook(rows[0]) : null;
}

/** Deletes the webhook; its deliveries go with it (ON DELETE CASCADE). */
export async function deleteWebhook(partnerId: string, webhookId: string, q: Queryable): Promise<boolean> {
  const rows = await q.query('DELETE FROM webhooks WHERE partner_id = $1 AND id = $2 RETURNING id', [partnerId, webhookId]);
  return rows.length > 0;
}

/**
 * A new signing secret; the current one becomes the previous, signing too until `previousExpiresAt`
 * (docs/decisions-log.md, 'Webhook operations'). Whatever previous secret there was is dropped: at most two secrets at once.
 */
export async function rotateWebhookSecret(
  partnerId: string,
  webhookId: string,
  input: { secretCiphertext: string; previousExpiresAt: Date; now: Date },
  q: Queryable,
): Promise<DeveloperWebhook | null> {
  const rows = await q.query<WebhookRow>(
    `UPDATE webhooks w SET
        previous_secret_ciphertext = w.secret_ciphertext, previous_secret_expires_at = $4,
        secret_ciphertext = $3, updated_at = $5
      WHERE w.partner_id = $1 AND w.id = $2
      RETURNING ${COLUMNS}`,
    [partnerId, webhookId, input.secretCiphertext, input.previousExpiresAt, input.now],
  );
  return rows[0] ? toDeveloperWebhook(rows[0]) : null;
}

export interface AttemptStats {
  delivered: number;
  failedAttempts: number;
  dead: number;
  p50Ms: number | null;
  p99Ms: number | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
}

/**
 * The webhook's attempts since `since` (counts and duration percentiles) and its latest success and
 * failure: two index ranges of the webhook's own attempts and two backward probes (migration 0015's
 * partial indexes), one statement. The caller has checked the webhook is the partner's.
 */
export async function webhookAttemptStats(webhookId: string, since: Date, q: Queryable): Promise<AttemptStats> {
  const rows = await q.query<{
    delivered: number;
    failed: number;
    dead: number;
    p50: number | null;
    p99: number | null;
    last_success: Date | null;
    last_failure: Date | null;
  }>(
    `WITH win AS (
       SELECT a.duration_ms, a.outcome FROM webhook_delivery_attempts a
        WHERE a.webhook_id = $1 AND a.at >= $2 AND a.outcome = 'DELIVERED'
       UNION ALL
       SELECT a.duration_ms, a.outcome FROM webhook_delivery_attempts a
        WHERE a.webhook_id = $1 AND a.at >= $2 AND a.outcome <> 'DELIVERED'
     )
     SELECT count(*) FILTER (WHERE outcome = 'DELIVERED')::int AS delivered,
            count(*) FILTER (WHERE outcome <> 'DELIVERED')::int AS failed,
            count(*) FILTER (WHERE outcome = 'DEAD')::int AS dead,
            round(percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms))::int AS p50,
            round(percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms))::int AS p99,
            (SELECT max(a.at) FROM webhook_delivery_attempts a WHERE a.webhook_id = $1 AND a.outcome = 'DELIVERED') AS last_success,
            (SELECT max(a.at) FROM webhook_delivery_attempts a WHERE a.webhook_id = $1 AND a.outcome <> 'DELIVERED') AS last_failure
       FROM win`,
    [webhookId, since],
  );
  const r = rows[0];
  return {
    delivered: r.delivered,
    failedAttempts: r.failed,
    dead: r.dead,
    p50Ms: r.p50,
    p99Ms: r.p99,
    lastSuccessAt: r.last_success,
    lastFailureAt: r.last_failure,
  };
}

/**
 * Moves the webhooks of `fromKeyId` to `toKeyId` (both the partner's); returns how many. Called by a key
 * rotation inside its transaction (src/modules/keys/keys.service.ts).
 */
export async function moveWebhooks(
  partnerId: string,
  fromKeyId: string,
  toKeyId: string,
  at: Date,
  q: Queryable,
): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `WITH moved AS (
       UPDATE webhooks SET api_key_id = $3, updated_at = $4 WHERE partner_id = $1 AND api_key_id = $2 RETURNING 1)
     SELECT count(*)::int AS n FROM moved`,
    [partnerId, fromKeyId, toKeyId, at],
  );
  return rows[0].n;
}
