/**
 * Request validation and response serialisation from the route schemas.
 *
 * Bodies are validated strictly (no type coercion, unknown fields rejected by the schemas'
 * `additionalProperties: false`); query strings, params and headers are coerced, since they arrive as
 * text. Named schemas (`$id`) are inlined wherever they are used: they exist for the OpenAPI document,
 * and inlining keeps each route's compiled validator self-contained.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fastJson from 'fast-json-stringify';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import { AppError, type ValidationDetail } from '../errors.js';

// ajv-formats is CommonJS; its default export arrives wrapped under native ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

function newAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    messages: true,
  });
  addFormats(ajv);
  return ajv;
}

/** A deep copy of a schema without `$id`s, so one named schema can appear in many routes. */
export function inlineSchema<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((s) => inlineSchema(s)) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    if (k === '$id') continue;
    out[k] = inlineSchema(v);
  }
  return out as T;
}

/**
 * Operations that take no body (revoke, rotate, test ping, redeliver, deletes) accept none, `{}` or
 * `null`; anything else is refused like an unknown field of any other body (docs/decisions-log.md, 'Requests, errors and input'), instead of
 * being silently ignored. Added to every write route that declares no body schema.
 */
export function refuseBodiesWhereNoneIsTaken(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.schema?.body !== undefined || !methods.some((m) => WRITE_METHODS.has(m))) return;
    const preValidation = route.preValidation === undefined ? [] : [route.preValidation].flat();
    route.preValidation = [...preValidation, refuseBody];
  });
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function refuseBody(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  done(unexpectedBody(request.body) ?? undefined);
}

function unexpectedBody(body: unknown): AppError | null {
  if (body === undefined || body === null) return null;
  if (typeof body !== 'object' || Array.isArray(body)) {
    return new AppError('ERR_VALIDATION', 'body must be empty (this operation takes no body)', [
      { field: 'body', messages: ['must be empty'] },
    ]);
  }
  const fields = Object.keys(body);
  if (fields.length === 0) return null;
  const message = 'is not allowed (this operation takes no body)';
  return new AppError(
    'ERR_VALIDATION',
    `${fields[0]} ${message}`,
    fields.map((field) => ({ field, messages: [message] })),
  );
}

export function registerSchemaCompilers(app: FastifyInstance): void {
  const strict = newAjv(false);
  const coercing = newAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(inlineSchema(schema)) as ValidateFunction;
  });
  app.setSerializerCompiler(({ schema }) => fastJson(serializerSchema(inlineSchema(schema)) as Parameters<typeof fastJson>[0]));
}

/**
 * fast-json-stringify resolves `anyOf` by validating each value against the branches at run time, which
 * is slow on hot answers; `T | null` is rewritten as `T` with `nullable: true`, which it handles natively.
 */
export function serializerSchema<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((s) => serializerSchema(s)) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const s = schema as Record<string, unknown>;
  const union = s.anyOf as unknown[] | undefined;
  if (Array.isArray(union) && union.length === 2) {
    const isNull = (u: unknown) => typeof u === 'object' && u !== null && (u as Record<string, unknown>).type === 'null';
    const other = union.find((u) => !isNull(u));
    if (other && union.some(isNull) && typeof (other as Record<string, unknown>).type === 'string') {
      const { anyOf: _anyOf, ...rest } = s;
      const merged: Record<string, unknown> = { ...(other as Record<string, unknown>), ...rest, nullable: true };
      // A nullable enumeration (an offer's declineReason): null must be one of the values too, or the
      // union check of an enclosing anyOf (the webhook envelopes) refuses a null.
      if (Array.isArray(merged.enum) && !merged.enum.includes(null)) merged.enum = [...merged.enum, null];
      return serializerSchema(merged) as T;
    }
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) out[k] = serializerSchema(v);
  return out as T;
}

function joinPath(instancePath: string, child?: string): string {
  const parts = instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.join('.');
}

function describe(error: ErrorObject): { field: string; message: string } {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { field: joinPath(error.instancePath, String(params.missingProperty)), message: 'is required' };
    case 'additionalProperties':
      return { field: joinPath(error.instancePath, String(params.additionalProperty)), message: 'is not allowed' };
    case 'enum':
      return {
        field: joinPath(error.instancePath),
        message: `must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}`,
      };
    case 'format':
      return { field: joinPath(error.instancePath), message: `must be a valid ${String(params.format)}` };
    default:
      return { field: joinPath(error.instancePath), message: error.message ?? 'is invalid' };
  }
}

/** Ajv errors → `[{ field, messages[] }]` with dotted paths (`items.0.qty`). */
export function validationDetails(errors: readonly ErrorObject[], context: string | undefined): ValidationDetail[] {
  const byField = new Map<string, { messages: string[]; onlyUnion: boolean }>();
  for (const error of errors) {
    const { field, message } = describe(error);
    const name = field === '' ? (context === 'querystring' ? 'query' : (context ?? 'body')) : field;
    const entry = byField.get(name) ?? { messages: [], onlyUnion: true };
    // `T | null` unions report each failed branch plus the union itself; keep the useful messages.
    if (error.keyword === 'anyOf' || (error.keyword === 'type' && params(error).type === 'null')) {
      if (!entry.messages.includes(message) && entry.messages.length === 0) entry.messages.push(message);
    } else {
      if (entry.onlyUnion) entry.messages = [];
      entry.onlyUnion = false;
      if (!entry.messages.includes(message)) entry.messages.push(message);
    }
    byField.set(name, entry);
  }
  // A nullable object with an error inside (`customer.address.zip`) also fails its `null` branch: that
  // "must be null" says nothing the inner error does not, so it is dropped.
  const fields = [...byField.keys()];
  return [...byField.entries()]
    .filter(([field, { onlyUnion }]) => !(onlyUnion && fields.some((f) => f.startsWith(`${field}.`))))
    .map(([field, { messages }]) => ({ field, messages }));
}

function params(error: ErrorObject): Record<string, unknown> {
  return error.params as Record<string, unknown>;
}

export type RouteSchema = FastifySchema;

/**
 * The dotted path of the first string (or property name) in a parsed JSON body that holds a NUL
 * character, or null when there is none. PostgreSQL text cannot store U+0000, so such a value is
 * refused as input (400 ERR_VALIDATION) instead of failing in the database. Only called when the raw
 * body contains the escape `\u0000` (the only way a NUL can appear in valid JSON).
 */
export function nulCharacterPath(value: unknown, path: string[] = []): string | null {
  if (typeof value === 'string') return value.includes('\0') ? path.join('.') : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\0')) return [...path, k.replaceAll('\0', '\\u0000')].join('.');
    const found = nulCharacterPath(v, [...path, k]);
    if (found !== null) return found;
  }
  return null;
}
