/**
 * The attempt log of a delivery as partners read it (GET /v1/developer/deliveries/{id}). The rows are
 * written with each outcome (record-outcomes.ts) and go with their delivery (ON DELETE CASCADE).
 */
import type { Queryable } from '../../../db/db.js';
import type { DeliveryAttempt } from '../webhooks.schemas.js';

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
    requestHeaders: r.request_headers,
    responseHeaders: r.response_headers,
    responseBody: r.response_body,
  }));
}

/** The body exactly as stored, sent and signed. */
export async function findDeliveryBody(partnerId: string, deliveryId: string, q: Queryable): Promise<string | null> {
  const rows = await q.query<{ body: string }>('SELECT d.body FROM webhook_deliveries d WHERE d.partner_id = $1 AND d.id = $2', [
    partnerId,
    deliveryId,
  ]);
  return rows[0]?.body ?? null;
}
