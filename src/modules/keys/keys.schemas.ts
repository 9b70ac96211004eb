/**
 * Developer key shapes (docs/decisions-log.md, 'API keys'), named as in the contract. The usage series shapes live here too:
 * they are read through the key routes.
 */
import Type, { type Static } from 'typebox';
import { API_KEY_SCOPES, ApiKeyEnvironment, ApiKeyScope, DateTime, Nullable, Uuid } from '../../shared/schemas.js';

const developerKeyFields = {
  id: Uuid(),
  name: Type.String(),
  prefix: Type.String({
    description: 'The only part of the key stored in readable form: the environment prefix and the first random characters',
  }),
  environment: ApiKeyEnvironment,
  scopes: Type.Array(ApiKeyScope),
  rateLimit: Type.Integer({ description: 'Requests per minute (sliding window)' }),
  receivesAllOrders: Type.Boolean({
    description: 'Operator flag: the key sees every order of its environment, not only its own',
  }),
  isActive: Type.Boolean({ description: 'False once `revokedAt` has passed; true during a rotation grace period' }),
  lastUsedAt: Nullable(DateTime(), {
    description: 'Last partner request made with the key (one served by another API process may show up to a minute late)',
  }),
  revokedAt: Nullable(DateTime(), {
    description: 'When the key stops working: a rotation sets it 24 h ahead, a revoke sets it to now',
  }),
  createdAt: DateTime(),
};

export const DeveloperKey = Type.Object(developerKeyFields, {
  $id: 'DeveloperKey',
  additionalProperties: false,
  description: 'An API key as listed: the prefix only, never the key',
});
export type DeveloperKey = Static<typeof DeveloperKey>;

const keyField = {
  key: Type.String({
    description: 'The full key, shown only in this response; only its SHA-256 hash is kept',
  }),
};

export const DeveloperKeyCreated = Type.Object(
  { ...developerKeyFields, ...keyField },
  { $id: 'DeveloperKeyCreated', additionalProperties: false, description: 'A new key, with the full key shown once' },
);
export type DeveloperKeyCreated = Static<typeof DeveloperKeyCreated>;

export const DeveloperKeyRotated = Type.Object(
  {
    ...developerKeyFields,
    ...keyField,
    previousKeyId: Uuid({ description: 'The key rotated out' }),
    previousKeyRevokedAt: DateTime({ description: 'The old key works until this instant (24 h grace)' }),
    movedOrders: Type.Integer({ description: 'Orders moved from the old key to the new one' }),
    movedWebhooks: Type.Integer({ description: 'Webhooks moved from the old key to the new one' }),
  },
  {
    $id: 'DeveloperKeyRotated',
    additionalProperties: false,
    description: 'The new key of a rotation (same name, environment, scopes, rate limit and flags), shown once',
  },
);
export type DeveloperKeyRotated = Static<typeof DeveloperKeyRotated>;

export const DeveloperKeys = Type.Object(
  { items: Type.Array(DeveloperKey, { description: 'Newest first; revoked keys included' }) },
  { $id: 'DeveloperKeys', additionalProperties: false },
);
export type DeveloperKeys = Static<typeof DeveloperKeys>;

const usageFields = {
  day: Type.String({ format: 'date', description: 'UTC calendar day, YYYY-MM-DD' }),
  requests: Type.Integer({ description: 'Partner requests made with the key' }),
  clientErrors: Type.Integer({ description: 'Answers with a 4xx status (429 included)' }),
  serverErrors: Type.Integer({ description: 'Answers with a 5xx status' }),
};

export const DeveloperKeyUsage = Type.Object(usageFields, {
  $id: 'DeveloperKeyUsage',
  additionalProperties: false,
  description: 'Counters of one key for one UTC day',
});
export type DeveloperKeyUsage = Static<typeof DeveloperKeyUsage>;

export const DeveloperKeyUsageSeries = Type.Object(
  {
    apiKeyId: Uuid(),
    days: Type.Integer({ description: 'Number of days in `items`' }),
    items: Type.Array(DeveloperKeyUsage, { description: 'Zero-filled, oldest first, ending today (UTC)' }),
    totalRequests: Type.Integer({ description: 'Sum of `requests` over `items`' }),
  },
  { $id: 'DeveloperKeyUsageSeries', additionalProperties: false },
);
export type DeveloperKeyUsageSeries = Static<typeof DeveloperKeyUsageSeries>;

/** The same counters as DeveloperKeyUsage, under the name PartnerMe uses (docs/decisions-log.md, 'API keys'). */
export const PartnerUsage = Type.Object(usageFields, {
  $id: 'PartnerUsage',
  additionalProperties: false,
  description: 'Counters of the calling key for one UTC day',
});
export type PartnerUsage = Static<typeof PartnerUsage>;

export const CreateDeveloperKeyDto = Type.Object(
  {
    name: Type.String({ minLength: 2, maxLength: 60, description: '2 to 60 characters' }),
    environment: ApiKeyEnvironment,
    scopes: Type.Array(ApiKeyScope, {
      minItems: 1,
      maxItems: API_KEY_SCOPES.length,
      uniqueItems: true,
      description: 'At least one; no repeats',
    }),
  },
  { $id: 'CreateDeveloperKeyDto', additionalProperties: false },
);
export type CreateDeveloperKeyDto = Static<typeof CreateDeveloperKeyDto>;

export const KeyIdParams = Type.Object({ id: Type.String({ description: 'The key id' }) });

export const UsageQuery = Type.Object(
  { days: Type.Optional(Type.Integer({ minimum: 1, maximum: 35, default: 7, description: '1 to 35, default 7' })) },
  { additionalProperties: false },
);

export const UpdateKeyByOperatorDto = Type.Object(
  {
    rateLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, description: 'Requests per minute, 1 to 100000' })),
    receivesAllOrders: Type.Optional(Type.Boolean({ description: 'The key sees every order of its environment' })),
  },
  { additionalProperties: false, description: 'Both fields optional; an empty object changes nothing' },
);
export type UpdateKeyByOperatorDto = Static<typeof UpdateKeyByOperatorDto>;

export const DeveloperLimits = Type.Object(
  {
    activeKeysPerPartner: Type.Integer({
      description:
        'Keys a partner may have at once with no `revokedAt` (a key rotated out does not count); a rotation is always allowed',
    }),
    webhooksPerKey: Type.Integer({ description: 'Webhooks one API key may have' }),
  },
  {
    $id: 'DeveloperLimits',
    additionalProperties: false,
    description:
      'The limits the API enforces on what a partner creates; a create past one answers ERR_API_KEY_LIMIT or ERR_WEBHOOK_LIMIT',
  },
);
export type DeveloperLimits = Static<typeof DeveloperLimits>;
