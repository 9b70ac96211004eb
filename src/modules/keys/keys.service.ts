/**
 * API key lifecycle (docs/decisions-log.md, 'API keys'): create, list, revoke, rotate with a 24 h grace, usage,
 * and the operator's limit and flag. Every change to an existing key is announced to every process's
 * key cache before the answer goes out, so the next partner request anywhere sees it.
 */
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import { AppError, notFound } from '../../errors.js';
import { isUuid, newId } from '../../shared/ids.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import { moveOpenOffers } from '../offers/offers.repo.js';
import { moveOrders } from '../orders/order-writes.repo.js';
import type { UsageRecorder } from '../usage/usage.types.js';
import { moveWebhooks } from '../webhooks/webhooks.repo.js';
import { generateKey } from './key-format.js';
import type { KeyResolver } from './key-resolver.js';
import {
  countActiveKeys,
  findKey,
  insertKey,
  type KeyRecord,
  listKeys,
  lockPartnerKeys,
  retireKey,
  revokeKey,
  updateKeyAsOperator,
} from './keys.repo.js';
import type {
  CreateDeveloperKeyDto,
  DeveloperKey,
  DeveloperKeyCreated,
  DeveloperKeyRotated,
  DeveloperKeys,
  DeveloperKeyUsageSeries,
  UpdateKeyByOperatorDto,
} from './keys.schemas.js';

export const MAX_ACTIVE_KEYS = 10;
export const ROTATION_GRACE_MS = 24 * 3600 * 1000;
export const DEFAULT_RATE_LIMIT = 600;

export interface KeysDeps {
  db: Db;
  clock: Clock;
  keys: KeyResolver;
  usage: UsageRecorder;
  /**
   * Told when a rotation moves orders to the successor: the orders' read cache
   * (src/modules/orders/read-cache.ts), as this service needs it.
   */
  orderCache: { changed(change: { environment: ApiKeyEnvironment; keyIds: string[] }): Promise<void> };
}

export function toDeveloperKey(key: KeyRecord, nowMs: number): DeveloperKey {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    environment: key.environment,
    scopes: key.scopes,
    rateLimit: key.rateLimit,
    receivesAllOrders: key.receivesAllOrders,
    // A rotated-out key is still active during its grace period; it stops once revokedAt has passed.
    isActive: key.revokedAt === null || key.revokedAt.getTime() > nowMs,
    lastUsedAt: key.lastUsedAt ? key.lastUsedAt.toISOString() : null,
    revokedAt: key.revokedAt ? key.revokedAt.toISOString() : null,
    createdAt: key.createdAt.toISOString(),
  };
}

const keyNotFound = () => notFound('API key');

/**
 * lastUsedAt is written by the usage flush: every route that answers a DeveloperKey flushes first, so
 * this process's latest requests show (and two answers about an unused key agree). A failed flush keeps
 * its counts for the next one and must not fail the route.
 */
async function flushLastUsed(deps: KeysDeps): Promise<void> {
  await deps.usage.flush().catch(() => {});
}

export async function listDeveloperKeys(deps: KeysDeps, partnerId: string): Promise<DeveloperKeys> {
  await flushLastUsed(deps);
  const now = deps.clock.nowMs();
  return { items: (await listKeys(partnerId, deps.db)).map((k) => toDeveloperKey(k, now)) };
}

export async function createDeveloperKey(
  deps: KeysDeps,
  partnerId: string,
  dto: CreateDeveloperKeyDto,
): Promise<DeveloperKeyCreated> {
  const generated = generateKey(dto.environment);
  const now = deps.clock.now();
  const created = await deps.db.tx(async (q) => {
    await lockPartnerKeys(partnerId, q);
    if ((await countActiveKeys(partnerId, q)) >= MAX_ACTIVE_KEYS) {
      throw new AppError(
        'ERR_API_KEY_LIMIT',
        `A partner may have at most ${MAX_ACTIVE_KEYS} active keys; revoke one first (rotation is always allowed)`,
      );
    }
    return insertKey(
      partnerId,
      {
        id: newId(),
        name: dto.name,
        prefix: generated.prefix,
        hash: generated.hash,
        environment: dto.environment,
        scopes: dto.scopes,
        rateLimit: DEFAULT_RATE_LIMIT,
        receivesAllOrders: false,
        createdAt: now,
      },
      q,
    );
  });
  // No cache announcement: no process can hold anything for a key that did not exist (its hash was
  // never presented, so not even a negative entry).
  return { ...toDeveloperKey(created, deps.clock.nowMs()), key: generated.key };
}

export async function revokeDeveloperKey(deps: KeysDeps, partnerId: string, id: string): Promise<DeveloperKey> {
  if (!isUuid(id)) throw keyNotFound();
  await flushLastUsed(deps);
  const key = await revokeKey(partnerId, id, deps.clock.now(), deps.db);
  if (!key) throw keyNotFound();
  await deps.keys.invalidateAll();
  return toDeveloperKey(key, deps.clock.nowMs());
}

export async function rotateDeveloperKey(deps: KeysDeps, partnerId: string, id: string): Promise<DeveloperKeyRotated> {
  if (!isUuid(id)) throw keyNotFound();
  const now = deps.clock.now();
  const graceEnds = new Date(now.getTime() + ROTATION_GRACE_MS);
  const result = await deps.db.tx(async (q) => {
    // The row lock makes two concurrent rotations of one key run one after the other: the second sees
    // revoked_at set and answers ERR_API_KEY_REVOKED instead of creating a second successor.
    const old = await findKey(partnerId, id, q, true);
    if (!old) throw keyNotFound();
    if (old.revokedAt !== null) {
      throw new AppError('ERR_API_KEY_REVOKED', 'This key is revoked or already rotated; rotate its successor instead');
    }
    const generated = generateKey(old.environment);
    const successor = await insertKey(
      partnerId,
      {
        id: newId(),
        name: old.name,
        prefix: generated.prefix,
        hash: generated.hash,
        environment: old.environment,
        scopes: old.scopes,
        rateLimit: old.rateLimit,
        receivesAllOrders: old.receivesAllOrders,
        createdAt: now,
      },
      q,
    );
    const retired = await retireKey(partnerId, old.id, successor.id, graceEnds, q);
    // Open offers first (offers.repo.ts, moveOpenOffers: why before the orders).
    await moveOpenOffers(partnerId, old.id, successor.id, q);
    const movedOrders = await moveOrders(partnerId, old.id, successor.id, q);
    const movedWebhooks = await moveWebhooks(partnerId, old.id, successor.id, now, q);
    return { successor, retired, key: generated.key, movedOrders, movedWebhooks };
  });
  await deps.keys.invalidateAll();
  await deps.orderCache.changed({ environment: result.successor.environment, keyIds: [result.retired.id, result.successor.id] });
  return {
    ...toDeveloperKey(result.successor, deps.clock.nowMs()),
    key: result.key,
    previousKeyId: result.retired.id,
    previousKeyRevokedAt: graceEnds.toISOString(),
    movedOrders: result.movedOrders,
    movedWebhooks: result.movedWebhooks,
  };
}

export async function keyUsageSeries(
  deps: KeysDeps,
  partnerId: string,
  id: string,
  days: number,
): Promise<DeveloperKeyUsageSeries> {
  if (!isUuid(id)) throw keyNotFound();
  const key = await findKey(partnerId, id, deps.db);
  if (!key) throw keyNotFound();
  // Fresh: read the stored rows now (other processes' flushes included) plus this process's unflushed counts.
  const items = await deps.usage.series(key.id, days, { fresh: true });
  return { apiKeyId: key.id, days, items, totalRequests: items.reduce((sum, d) => sum + d.requests, 0) };
}

export async function updateKeyByOperator(deps: KeysDeps, id: string, patch: UpdateKeyByOperatorDto): Promise<DeveloperKey> {
  if (!isUuid(id)) throw keyNotFound();
  await flushLastUsed(deps);
  const key = await updateKeyAsOperator(id, patch, deps.db);
  if (!key) throw keyNotFound();
  await deps.keys.invalidateAll();
  return toDeveloperKey(key, deps.clock.nowMs());
}
