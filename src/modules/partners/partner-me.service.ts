import { environmentName } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key.types.js';
import type { DailyUsage, UsageRecorder } from '../usage/usage.types.js';
import type { PartnerMe } from './partner-me.schemas.js';

/**
 * The calling key as PartnerMe. A hot path: the key comes from the authentication (cached), the usage
 * from the recorder's short snapshot plus its unflushed counts, so no database round trip as a rule,
 * and no promise either when the snapshot is fresh (Fastify sends a handler's plain return value).
 */
export function describeCallingKey(usage: UsageRecorder, key: ResolvedKey): PartnerMe | Promise<PartnerMe> {
  const usage7d = usage.series(key.id, 7);
  return usage7d instanceof Promise ? usage7d.then((days) => describe(key, days)) : describe(key, usage7d);
}

function describe(key: ResolvedKey, usage7d: DailyUsage[]): PartnerMe {
  return {
    partnerName: key.partnerName,
    keyName: key.name,
    environment: environmentName(key.environment),
    scopes: key.scopes,
    rateLimit: key.rateLimit,
    receivesAllOrders: key.receivesAllOrders,
    usage7d,
  };
}
