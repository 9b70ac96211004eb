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
}

const COLUMNS =
  'w.id, w.partner_id, w.api_key_id, w.url, w.events, w.secret_ciphertext, w.is_active, w.consecutive_failures, w.created_at';

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
  };
}

export async function updateWebhook(
  partnerId: string,
  webhookId: string,
  patch: { url?: string; events?: WebhookEvent[]; isActive?: boolean; now: Date },
  q: Queryable,
): Promise<DeveloperWebhook | null> {
  // Switching a webhook on also clears its failure streak (spec 3.3); switching it off keeps it, so
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
