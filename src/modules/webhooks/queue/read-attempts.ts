/**
 * The attempt log of a delivery as partners read it (GET /v1/developer/deliveries/{id}). The rows are
 * written with each outcome (record-outcomes.ts) and go with their delivery (ON DELETE CASCADE).
 */
import type { Queryable } from '../../../db/db.js';
import { loggedRequestHeaders } from '../delivery/attempt.js';
import type { DeliveryAttempt, DeliveryAttemptHeaders } from '../webhooks.schemas.js';

/** Every attempt of the partner's delivery, oldest first (the primary key's order). */
export async function listAttempts(partnerId: string, deliveryId: string, q: Queryable): Promise<DeliveryAttempt[]> {
  const rows = await q.query<{
    number: number;
    at: Date;
    duration_ms: number;
    status_code: number | null;
    error: string | null;
    request_headers: Record<string, string>;
    response_headers: Record<string, string> | null;
    response_body: string | null;
  }>(
    `SELECT a.number, a.at, a.duration_ms, a.status_code, a.error, a.request_headers, a.response_headers, a.response_body
       FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.partner_id = $1 AND a.delivery_id = $2
      ORDER BY a.number`,
    [partnerId, deliveryId],
  );
  return rows.map((r) => ({
    number: r.number,
    at: r.at.toISOString(),
    durationMs: r.duration_ms,
    statusCode: r.status_code,
    error: r.error,
    // The stored headers are all those sent (attempt.ts, headersAsSent): this field keeps to the contract's part.
    requestHeaders: loggedRequestHeaders(r.request_headers),
    responseHeaders: r.response_headers,
    responseBody: r.response_body,
  }));
}

/**
 * Every header each attempt of the partner's delivery sent, oldest first. Attempts recorded before every
 * header was stored hold only Content-Type and the X-Partner-* ones.
 */
export async function listAttemptHeaders(partnerId: string, deliveryId: string, q: Queryable): Promise<DeliveryAttemptHeaders[]> {
  const rows = await q.query<{ number: number; request_headers: Record<string, string> }>(
    `SELECT a.number, a.request_headers
       FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.partner_id = $1 AND a.delivery_id = $2
      ORDER BY a.number`,
    [partnerId, deliveryId],
  );
  return rows.map((r) => ({ number: r.number, headers: r.request_headers }));
}

/** The body exactly as stored, sent and signed. */
export async function findDeliveryBody(partnerId: string, deliveryId: string, q: Queryable): Promise<string | null> {
  const rows = await q.query<{ body: string }>('SELECT d.body FROM webhook_deliveries d WHERE d.partner_id = $1 AND d.id = $2', [
    partnerId,
    deliveryId,
  ]);
  return rows[0]?.body ?? null;
}
