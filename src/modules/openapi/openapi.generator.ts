/**
 * Generates an OpenAPI 3.0.0 document from the route catalogue: the same TypeBox schemas that validate
 * requests and serialise responses. Nothing in the document is written by hand.
 *
 * The schemas are converted to OpenAPI 3.0 by schema-converter.ts. Error responses reference
 * `ErrorEnvelope` and list their codes, those the route declared plus those every route of its family
 * answers (API-key or bearer authentication).
 */
import type { CatalogRoute } from '../../plugins/route-catalog.js';
import { ErrorEnvelope } from '../../shared/schemas.js';
import { Converter } from './schema-converter.js';

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  title: string;
  description: string;
  /** Which routes the document holds. */
  include: (route: CatalogRoute) => boolean;
  tags: Array<{ name: string; description: string; 'x-traitTag'?: true }>;
  /** Both listeners (docs/decisions-log.md, 'OpenAPI documents'): partners and generated clients need absolute base URLs. */
  servers: Array<{ url: string; description: string; 'x-internal'?: boolean }>;
}

const API_VERSION = '0.1.0';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  429: 'Too many requests',
  500: 'Internal error',
  503: 'Service unavailable',
};

type Family = 'partner' | 'developer' | 'admin' | 'public';

/** Routes anyone may call: the documents themselves and the webhook event catalog. */
const PUBLIC_URLS = new Set(['/v1/developer/openapi.json', '/v1/openapi.json', '/v1/developer/event-types']);

function familyOf(route: CatalogRoute): Family {
  if (PUBLIC_URLS.has(route.url)) return 'public';
  if (route.url.startsWith('/v1/partner/')) return 'partner';
  if (route.url.startsWith('/v1/developer/')) return 'developer';
  if (route.url.startsWith('/v1/admin/')) return 'admin';
  return 'public';
}

/** Codes every route of a family can answer with the given status. */
const FAMILY_CODES: Record<Family, Record<number, string[]>> = {
  partner: {
    400: ['ERR_VALIDATION'],
    401: ['ERR_API_KEY_INVALID', 'ERR_API_KEY_REVOKED'],
    403: ['ERR_API_KEY_ENVIRONMENT', 'ERR_API_KEY_SCOPE'],
    404: ['ERR_NOT_FOUND'],
    429: ['ERR_RATE_LIMITED'],
  },
  developer: { 400: ['ERR_VALIDATION'], 401: ['ERR_UNAUTHORIZED'], 403: ['ERR_FORBIDDEN'], 404: ['ERR_NOT_FOUND'] },
  admin: { 400: ['ERR_VALIDATION'], 401: ['ERR_UNAUTHORIZED'], 403: ['ERR_FORBIDDEN'], 404: ['ERR_NOT_FOUND'] },
  public: { 400: ['ERR_VALIDATION'], 404: ['ERR_NOT_FOUND'] },
};

const SECURITY: Record<Family, Json[]> = {
  partner: [{ ApiKeyAuth: [] }],
  developer: [{ BearerAuth: [] }],
  admin: [{ BearerAuth: [] }],
  public: [],
};

function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function headerName(name: string): string {
  return name
    .split('-')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('-');
}

function parameters(route: CatalogRoute, c: Converter): Json[] {
  const out: Json[] = [];
  const add = (where: 'path' | 'query' | 'header', source: unknown) => {
    if (!source || typeof source !== 'object') return;
    const s = source as Json;
    const required = new Set((s.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries((s.properties as Json | undefined) ?? {})) {
      const lower = name.toLowerCase();
      if (where === 'header' && (lower === 'x-api-key' || lower === 'authorization')) continue; // security schemes
      const { description, ...schema } = prop as Json;
      const param: Json = {
        name: where === 'header' ? headerName(name) : name,
        in: where,
        required: where === 'path' ? true : required.has(name),
        schema: c.schema(schema),
      };
      if (typeof description === 'string') param.description = description;
      out.push(param);
    }
  };
  add('path', route.schema.params);
  add('query', route.schema.querystring);
  add('header', route.schema.headers);
  return out;
}

/**
 * The rate-limit fields of a partner answer, sent once the key is known (docs/openapi.md, "OWASP
 * ruleset"): on every success and on the errors answered after authentication.
 */
const RATE_LIMIT_HEADERS: Json = {
  RateLimit: {
    description: 'Requests left in the current window and seconds until reset (draft-ietf-httpapi-ratelimit-headers)',
    schema: { type: 'string', maxLength: 64, pattern: '^"per-key";r=\\d+;t=\\d+$', example: '"per-key";r=599;t=60' },
  },
  'RateLimit-Policy': {
    description: 'The rate-limit policy of the key: quota per window',
    schema: { type: 'string', maxLength: 64, pattern: '^"per-key";q=\\d+;w=\\d+$', example: '"per-key";q=600;w=60' },
  },
};
const RATE_LIMITED_ERRORS = new Set([400, 404, 409]);

/**
 * The content of a body or an answer: JSON; or, for a schema that names its media type in
 * `x-content-type` (a CSV download), that type; or, for one that names several in `x-media-types` (raw
 * bytes: photo uploads), each of those, with the schema without that field. Named examples, when the
 * route gives them, replace the sample a renderer would build from the schema (which fills in every
 * optional field at once, a body no rule accepts).
 */
function mediaTypes(s: Json, c: Converter, examples?: unknown): Json {
  const types = s['x-media-types'] as string[] | undefined;
  if (types) {
    const { 'x-media-types': _, ...schema } = s;
    return Object.fromEntries(types.map((t) => [t, { schema }]));
  }
  const type = typeof s['x-content-type'] === 'string' ? s['x-content-type'] : 'application/json';
  return { [type]: { schema: c.schema(s), ...(examples ? { examples } : {}) } };
}

/**
 * Every operation can fail unexpectedly, while the database is unreachable (docs/decisions-log.md,
 * 'Requests, errors and input', 'Dependency faults' and 'OpenAPI documents'), or when the database
 * cancels a statement past its deadline (docs/scale.md).
 */
const ALWAYS: Record<number, string[]> = { 500: ['ERR_INTERNAL'], 503: ['ERR_DEPENDENCY_UNAVAILABLE', 'ERR_QUERY_TIMEOUT'] };
/**
 * Every write can also be rolled back by PostgreSQL because of another transaction at the same moment (a
 * deadlock, a serialization failure): 409 ERR_CONFLICT with Retry-After, nothing applied, safe to send
 * again (docs/decisions-log.md, 'Requests, errors and input'; src/plugins/error-handler.ts).
 */
const ALWAYS_ON_WRITES: Record<number, string[]> = { ...ALWAYS, 409: ['ERR_CONFLICT'] };

function responses(route: CatalogRoute, family: Family, c: Converter): Json {
  const out: Json = {};
  const declared: Record<string, unknown> = { ...((route.schema.response ?? {}) as Record<string, unknown>) };
  const always = route.method === 'GET' || route.method === 'HEAD' ? ALWAYS : ALWAYS_ON_WRITES;
  for (const [status, codes] of Object.entries(always)) {
    declared[status] ??= { ...ErrorEnvelope, 'x-error-codes': codes };
  }
  for (const [statusText, schema] of Object.entries(declared)) {
    const status = Number(statusText);
    const s = schema as Json;
    if (status >= 400) {
      const codes = [
        ...new Set([
          ...(FAMILY_CODES[family][status] ?? []),
          ...(always[status] ?? []),
          ...((s['x-error-codes'] as string[] | undefined) ?? []),
        ]),
      ];
      const envelope = c.schema(s.$id === 'ErrorEnvelope' ? s : { ...s, $id: 'ErrorEnvelope' });
      const response: Json = {
        description:
          typeof s['x-response-description'] === 'string'
            ? s['x-response-description']
            : codes.length
              ? `${STATUS_TEXT[status] ?? 'Error'}: ${codes.join(', ')}`
              : (STATUS_TEXT[status] ?? 'Error'),
        content: {
          'application/json': {
            schema: codes.length
              ? { allOf: [envelope, { type: 'object', properties: { code: { type: 'string', enum: codes } } }] }
              : envelope,
          },
        },
      };
      if (codes.length) response['x-error-codes'] = codes;
      if (status === 429) {
        response.headers = {
          'Retry-After': {
            description: 'Seconds to wait before retrying; a retry after that long is admitted',
            schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400 },
          },
          ...(family === 'partner' ? RATE_LIMIT_HEADERS : {}),
        };
      }
      if (status === 503) {
        response.headers = {
          'Retry-After': {
            description: 'Seconds to wait before retrying (1 for ERR_DEPENDENCY_UNAVAILABLE: outages end by themselves)',
            schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400 },
          },
        };
      }
      if (family === 'partner' && RATE_LIMITED_ERRORS.has(status)) response.headers = RATE_LIMIT_HEADERS;
      if (status === 409 && always === ALWAYS_ON_WRITES) {
        response.headers = {
          ...((response.headers as Json | undefined) ?? {}),
          'Retry-After': {
            description:
              'Only on an ERR_CONFLICT of a request rolled back by a concurrent change (nothing was applied): ' +
              'seconds after which to send the same request again. Absent on every other conflict, which ' +
              'the same request would meet again.',
            schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400 },
          },
        };
      }
      out[statusText] = response;
      continue;
    }
    if (status === 204 || s.type === 'null') {
      out[statusText] = { description: STATUS_TEXT[status] ?? 'No Content' };
      continue;
    }
    const response: Json = {
      description: (typeof s.description === 'string' && !s.$id ? s.description : undefined) ?? STATUS_TEXT[status] ?? 'OK',
      content: mediaTypes(s, c),
    };
    if (family === 'partner') response.headers = RATE_LIMIT_HEADERS;
    out[statusText] = response;
  }
  return out;
}

function operationId(route: CatalogRoute): string {
  if (typeof route.schema.operationId === 'string') return route.schema.operationId;
  const words = route.url
    .replace(/^\/v1\//, '')
    .split(/[/.:_-]+/)
    .filter(Boolean);
  return [route.method.toLowerCase(), ...words].map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}

export function generateOpenApi(routes: readonly CatalogRoute[], options: OpenApiOptions): Json {
  const c = new Converter();
  c.schema(ErrorEnvelope); // always present, whatever the routes reference
  const paths: Record<string, Json> = {};
  const selected = routes
    .filter((r) => !r.schema.hide && options.include(r))
    .sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method));
  for (const route of selected) {
    const family = familyOf(route);
    const op: Json = { operationId: operationId(route) };
    if (route.schema.summary) op.summary = route.schema.summary;
    if (route.schema.description) op.description = route.schema.description;
    if (route.schema.tags) op.tags = route.schema.tags;
    if (route.schema.deprecated) op.deprecated = true;
    const params = parameters(route, c);
    if (params.length) op.parameters = params;
    if (route.schema.body) {
      op.requestBody = {
        required: route.schema.bodyOptional !== true,
        content: mediaTypes(route.schema.body as Json, c, route.schema.bodyExamples),
      };
    }
    op.responses = responses(route, family, c);
    op.security = SECURITY[family];
    const path = openApiPath(route.url);
    paths[path] = { ...(paths[path] ?? {}), [route.method.toLowerCase()]: op };
  }
  const schemas = Object.fromEntries(Object.entries(c.components).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: '3.0.0',
    info: {
      title: options.title,
      version: API_VERSION,
      description: options.description,
      contact: { name: 'Partner integrations', url: `${options.servers[0]?.url ?? ''}/docs` },
      license: { name: 'Proprietary: for integrating with this platform only', url: `${options.servers[0]?.url ?? ''}/docs` },
    },
    servers: options.servers,
    tags: options.tags,
    paths,
    components: {
      schemas,
      securitySchemes: {
        ApiKeyAuth: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Api-Key',
          description: 'A partner API key: svc_live_… or svc_sandbox_…',
        },
        BearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: [
            'An access token (JWT, valid 15 minutes) of a PARTNER account. Sign in with a one-time code:',
            '`POST /v1/auth/otp/request {phone}` sends the code, `POST /v1/auth/otp/verify {phone, code}` answers',
            '`{ accessToken, refreshToken, … }`; `POST /v1/auth/refresh {refreshToken}` gives a new pair.',
            'These sign-in operations are described in the full document, `/v1/openapi.json`.',
            'Tokens follow RFC8725 (JWT best current practices): HS256 only, the algorithm fixed by the server (never',
            'taken from the token, `none` refused), issuer and audience checked.',
          ].join(' '),
        },
      },
    },
  };
}
