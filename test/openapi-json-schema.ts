/**
 * An OpenAPI 3.0 Schema Object as plain JSON Schema, for validating answers with Ajv: what a validating
 * client or proxy (Prism, a generated zod schema) does with our documents. The one difference that
 * matters is `nullable`: `{ type, nullable: true }` is `type: [type, 'null']`, and a nullable
 * composition (`nullable: true` over `allOf: [ { $ref } ]`, docs/decisions-log.md, 'OpenAPI documents') is "null, or the
 * composition". `example` is an annotation Ajv does not know.
 */
type Json = Record<string, unknown>;

export function openApiToJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(openApiToJsonSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    if (key === 'example' || key === 'nullable' || key.startsWith('x-')) continue;
    out[key] = key === 'properties' || key === 'components' || key === 'schemas' ? mapValues(value) : openApiToJsonSchema(value);
  }
  if ((schema as Json).nullable !== true) return out;
  const composed = 'allOf' in out || 'oneOf' in out || 'anyOf' in out || '$ref' in out;
  if (composed) {
    const { description, ...rest } = out;
    return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] };
  }
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

function mapValues(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, openApiToJsonSchema(v)]));
}
