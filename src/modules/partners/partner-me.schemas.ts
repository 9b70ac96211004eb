import Type, { type Static } from 'typebox';
import { ApiKeyScope, PartnerEnvironment } from '../../shared/schemas.js';
import { PartnerUsage } from '../keys/keys.schemas.js';

/** The calling key and its partner (docs/decisions-log.md, 'API keys'). */
export const PartnerMe = Type.Object(
  {
    partnerName: Type.String(),
    keyName: Type.String(),
    environment: PartnerEnvironment,
    scopes: Type.Array(ApiKeyScope),
    rateLimit: Type.Integer({ description: 'Requests per minute for this key (sliding window)' }),
    receivesAllOrders: Type.Boolean({ description: 'Admin flag: the key sees every order, not only its own' }),
    usage7d: Type.Array(PartnerUsage, {
      description: 'Daily counters of this key, oldest first, 7 UTC days ending today (may lag a few seconds)',
    }),
  },
  { $id: 'PartnerMe', additionalProperties: false },
);
export type PartnerMe = Static<typeof PartnerMe>;
