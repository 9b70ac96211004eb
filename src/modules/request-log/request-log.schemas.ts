/**
 * Request log shapes (docs/decisions-log.md, 'Request log'), named like the other developer resources.
 */
import Type, { type Static } from 'typebox';
import { ApiKeyEnvironment, DateTime, Nullable, PageQuery, StringEnum, Uuid } from '../../shared/schemas.js';

export const REQUEST_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const summaryFields = {
  id: Type.String({
    description: 'The request id, also sent as the `X-Request-Id` header of the answer',
    examples: ['req_019ab3f2c4d1a1b2c3d4e5f6a7b8c9d0'],
  }),
  apiKeyId: Uuid({ description: 'The key the request was made with' }),
  environment: ApiKeyEnvironment,
  method: Type.String({ description: 'HTTP method', examples: ['POST'] }),
  path: Type.String({ description: 'The path as sent (percent-encoded), without the query', examples: ['/v1/partner/orders'] }),
  query: Nullable(Type.String(), { description: 'The query string as sent, without `?`; null when there was none' }),
  statusCode: Type.Integer({ description: 'HTTP status of the answer' }),
  errorCode: Nullable(Type.String(), { description: 'The `code` of an error answer (ERR_*); null for a success' }),
  durationMs: Type.Number({ description: 'Time from arrival to the last byte of the answer, in milliseconds' }),
  ip: Type.String({ description: 'Address the request came from' }),
  userAgent: Nullable(Type.String(), { description: 'The User-Agent header' }),
  idempotencyKey: Nullable(Type.String(), { description: 'The Idempotency-Key header' }),
  createdAt: DateTime({ description: 'When the request arrived' }),
};

export const DeveloperRequest = Type.Object(summaryFields, {
  $id: 'DeveloperRequest',
  additionalProperties: false,
  description: 'One partner-API request made with one of the partner’s keys, as listed (no bodies)',
});
export type DeveloperRequest = Static<typeof DeveloperRequest>;

const bodyNote =
  'The first 8 KiB, with credentials replaced by `[redacted]`. Kept for POSTs and for 4xx/5xx answers only (never for a successful read); a body that is not JSON or not valid UTF-8, or that was never read because the request was refused first, is a short note in brackets.';

export const DeveloperRequestDetail = Type.Object(
  {
    ...summaryFields,
    requestBody: Nullable(Type.String(), { description: `Request body. ${bodyNote} Null when there is none or none is kept.` }),
    responseBody: Nullable(Type.String(), { description: `Response body. ${bodyNote} Null when none is kept.` }),
  },
  { $id: 'DeveloperRequestDetail', additionalProperties: false, description: 'One logged request with its bodies' },
);
export type DeveloperRequestDetail = Static<typeof DeveloperRequestDetail>;

export const PageOfDeveloperRequest = Type.Object(
  {
    page: Type.Integer({ minimum: 1, maximum: 10000 }),
    pageSize: Type.Integer({ minimum: 1, maximum: 50 }),
    total: Type.Integer({
      description: 'All matching requests, counted up to 10,000; when more match it is 10,000 and `totalCapped` is true',
    }),
    totalCapped: Type.Boolean({ description: 'Whether more than 10,000 requests match (then `total` is 10,000)' }),
    nextStartingAfter: Nullable(Type.String(), {
      description:
        'Pass as `startingAfter` (with the same filters) for the requests after this page; null when this page is the last',
    }),
    items: Type.Array(DeveloperRequest, { description: 'Newest first' }),
  },
  { $id: 'PageOfDeveloperRequest', additionalProperties: false },
);
export type PageOfDeveloperRequest = Static<typeof PageOfDeveloperRequest>;

export const RequestsQuery = Type.Object(
  {
    apiKeyId: Type.Optional(Uuid({ description: 'Only requests made with this key' })),
    status: Type.Optional(
      Type.String({
        pattern: '^([245]xx|[1-5][0-9]{2})$',
        description: 'A class (`2xx`, `4xx`, `5xx`) or one status (`404`)',
        examples: ['4xx'],
      }),
    ),
    code: Type.Optional(
      Type.String({
        pattern: '^ERR_[A-Z0-9_]{1,60}$',
        description: 'Only answers with this error code',
        examples: ['ERR_VALIDATION'],
      }),
    ),
    method: Type.Optional(StringEnum(REQUEST_METHODS, { description: 'HTTP method' })),
    path: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        pattern: '^/',
        description: 'An exact path, or a prefix ending in `*` (`/v1/partner/orders/ORD-1*`)',
      }),
    ),
    since: Type.Optional(DateTime({ description: 'Requests that arrived at or after this instant' })),
    until: Type.Optional(DateTime({ description: 'Requests that arrived before this instant' })),
    startingAfter: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'A request id of this list (a previous answer’s `nextStartingAfter`): the requests logged before it, newest first, with the same filters. `page` is omitted; any depth',
        examples: ['req_019ab3f2c4d1a1b2c3d4e5f6a7b8c9d0'],
      }),
    ),
    ...PageQuery,
  },
  {
    additionalProperties: false,
    description: '`page` × `pageSize` may reach 10,000; deeper, follow `startingAfter`',
  },
);
export type RequestsQuery = Static<typeof RequestsQuery>;

export const RequestIdParams = Type.Object({ id: Type.String({ description: 'A request id (`req_…`)' }) });

export const RequestLogDropsQuery = Type.Object(
  {
    since: Type.Optional(DateTime({ description: 'Start of the period (default: 24 hours before `until`)' })),
    until: Type.Optional(DateTime({ description: 'End of the period (default: now)' })),
  },
  { additionalProperties: false },
);
export type RequestLogDropsQuery = Static<typeof RequestLogDropsQuery>;

const dropCounts = {
  dropped: Type.Integer({
    description:
      'Requests left out of the log: successful reads under overload; any request when the log could not be written for a long while',
  }),
  notStreamed: Type.Integer({ description: 'Logged requests not sent on the realtime channel (over 50 a second)' }),
};

export const RequestLogDropMinute = Type.Object(
  { minute: DateTime({ description: 'Start of the minute' }), ...dropCounts },
  { $id: 'RequestLogDropMinute', additionalProperties: false },
);

export const RequestLogDrops = Type.Object(
  {
    since: DateTime(),
    until: DateTime(),
    ...dropCounts,
    items: Type.Array(RequestLogDropMinute, { description: 'Minutes with any, newest first (at most 1440)' }),
  },
  {
    $id: 'RequestLogDrops',
    additionalProperties: false,
    description: 'What the request log left out in a period, in all and per minute',
  },
);
export type RequestLogDrops = Static<typeof RequestLogDrops>;
