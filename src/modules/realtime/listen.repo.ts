/**
 * The SQL of the realtime listen sessions (listen.ts). Run only for outbox batches with a type someone
 * listens to, somewhere: never on the path of a deployment without listen sessions.
 */
import type { Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment, ApiKeyScope } from '../../shared/schemas.js';
import { actsForSql, keyChainCte } from '../webhooks/queue/fan-out-outbox.js';
import type { EventViewer } from '../webhooks/routing.js';

export interface ListenKey extends Omit<EventViewer, 'events'> {
  id: string;
}

/**
 * The usable keys (not revoked, or in a rotation grace at `now`) of `environments` that may see an
 * event of `keyIds` (the keys the events' orders were assigned to): those keys and their successors by
 * rotation, and the keys that receive all orders; each with the keys whose orders it holds (itself and
 * those of `keyIds` it succeeded), as the webhook fan-out's subscribers query reads them; and the keys
 * of `partnerIds` (the partners settlement events are addressed to, docs/payments.md).
 */
export async function findListenKeys(
  events: { keyIds: string[]; environments: ApiKeyEnvironment[]; partnerIds?: string[] },
  now: Date,
  q: Queryable,
): Promise<ListenKey[]> {
  const rows = await q.query<{
    id: string;
    partner_id: string;
    environment: ApiKeyEnvironment;
    scopes: ApiKeyScope[];
    receives_all_orders: boolean;
    acts_for: string[];
  }>(
    `WITH RECURSIVE ${keyChainCte('$1')}
     SELECT k.id, k.environment, k.scopes, k.receives_all_orders, ${actsForSql('k.id')} AS acts_for, k.partner_id
       FROM api_keys k
      WHERE (k.revoked_at IS NULL OR k.revoked_at > $2)
        AND k.environment = ANY($3::text[])
        AND (k.receives_all_orders OR k.id IN (SELECT key_id FROM chain) OR k.partner_id = ANY($4::uuid[]))`,
    [events.keyIds, now, events.environments, events.partnerIds ?? []],
  );
  return rows.map((k) => ({
    id: k.id,
    partnerId: k.partner_id,
    environment: k.environment,
    scopes: k.scopes,
    receivesAllOrders: k.receives_all_orders,
    keyIds: k.acts_for,
  }));
}
