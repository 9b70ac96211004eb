/**
 * The key the simulator acts for, and what it reaches: only the orders assigned to that very key in the
 * sandbox (docs/decisions-log.md, 'Sandbox simulator and go-live checklist': others answer 404), whatever else the key may read (`receivesAllOrders` grants
 * reads, never writes). On the partner API it is the authenticated key (a ResolvedKey fits); on the
 * developer API (the portal) a key of the signed-in partner, checked here.
 */
import type { Clock } from '../../clock.js';
import type { Queryable } from '../../db/db.js';
import { AppError, notFound } from '../../errors.js';
import { isUuid } from '../../shared/ids.js';
import type { ApiKeyScope } from '../../shared/schemas.js';
import { findActsForKeyId, findKey, type KeyRecord } from '../keys/keys.repo.js';
import type { BatchScope } from '../orders/batches.repo.js';
import { lockVisibleOrder } from '../orders/order-locks.repo.js';
import type { PlatformMover } from '../orders/orders.service.js';
import type { PartnerOrderScope } from '../orders/visibility.js';

/** The fields of a key the simulator reads. */
export interface SandboxKey {
  id: string;
  scopes: readonly ApiKeyScope[];
  /** The key whose orders it acts on: itself, or its successor during a rotation grace. */
  actsForKeyId: string;
}

/** The orders the simulator reaches for `key`: the sandbox orders assigned to it, and nothing else. */
export function sandboxScopeOf(key: SandboxKey): PartnerOrderScope & BatchScope {
  return { environment: 'SANDBOX', keyId: key.actsForKeyId };
}

/**
 * The marketplace as the simulator plays it for `key`: the order is locked THROUGH the key's sandbox
 * scope (a live order, or another key's, is never even read, whatever its code), and the timeline entry
 * is the system's, as for the platform's own moves.
 */
export function simulatorFor(key: SandboxKey): PlatformMover {
  const scope = sandboxScopeOf(key);
  return { lock: (code: string, q: Queryable) => lockVisibleOrder(scope, code, q), actor: 'SYSTEM' };
}

/** A key of `partnerId` by id, or 404 (a malformed id, another partner's key). */
export async function partnerKey(partnerId: string, id: string, q: Queryable): Promise<KeyRecord> {
  if (!isUuid(id)) throw notFound('API key');
  const key = await findKey(partnerId, id, q);
  if (!key) throw notFound('API key');
  return key;
}

/**
 * A key of the signed-in partner the portal drives the simulator with: 404 when it is not the partner's,
 * 409 ERR_CONFLICT for a live key, 401 ERR_API_KEY_REVOKED once it has stopped working, 403
 * ERR_API_KEY_SCOPE without logistics:write (the scope the partner routes need).
 */
export async function sandboxKeyOfPartner(
  deps: { db: Queryable; clock: Clock },
  partnerId: string,
  id: string,
): Promise<SandboxKey> {
  const key = await partnerKey(partnerId, id, deps.db);
  if (key.environment !== 'SANDBOX') {
    throw new AppError('ERR_CONFLICT', 'This is a live key; the sandbox simulator works with sandbox keys only');
  }
  if (key.revokedAt !== null && key.revokedAt.getTime() <= deps.clock.nowMs()) {
    throw new AppError('ERR_API_KEY_REVOKED', 'This key is revoked');
  }
  if (!key.scopes.includes('logistics:write')) {
    throw new AppError('ERR_API_KEY_SCOPE', 'The simulator needs a key with the scope logistics:write');
  }
  const actsForKeyId = key.successorId === null ? key.id : ((await findActsForKeyId(partnerId, key.id, deps.db)) ?? key.id);
  return { id: key.id, scopes: key.scopes, actsForKeyId };
}
