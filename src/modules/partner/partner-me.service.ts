import type { ResolvedKey } from '../keys/key-resolver.js';
import type { UsageRecorder } from '../keys/rate-limit.types.js';
import type { PartnerMe } from './partner-me.schemas.js';

/**
 * The calling key as PartnerMe. A hot path: the key comes from the authentication (cached), the usage
 * from the recorder's short snapshot plus its unflushed counts, so no database round trip as a rule.
 */
export async function describeCallingKey(usage: UsageRecorder, key: ResolvedKey): Promise<PartnerMe> {
  return {
    partnerName: key.partnerName,
    keyName: key.name,
    environment: key.environment === 'LIVE' ? 'live' : 'sandbox',
    scopes: key.scopes,
    rateLimit: key.rateLimit,
    receivesAllOrders: key.receivesAllOrders,
    usage7d: await usage.series(key.id, 7),
  };
}
