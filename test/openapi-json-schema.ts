/**
 * An OpenAPI 3.0 Schema Object as plain JSON Schema, for validating answers with Ajv the way a partner's
 * tools do: the conversion is `@openapi-contrib/openapi-schema-to-json-schema`, which reads `nullable`
 * strictly (OpenAPI 3.0.3: it widens only a `type` in the same schema object) and drops the annotations
 * JSON Schema does not know (`example`). Extensions (`x-…`) are dropped here too.
 */
import { openapiSchemaToJsonSchema } from '@openapi-contrib/openapi-schema-to-json-schema';

type Json = Record<string, unknown>;

function withoutExtensions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutExtensions);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value as Json)
      .filter(([k]) => !k.startsWith('x-'))
      .map(([k, v]) => [k, withoutExtensions(v)]),
  );
}

/** One schema (a response's, a component's). */
export function openApiToJsonSchema(schema: unknown): unknown {
  const { $schema: _s, ...out } = openapiSchemaToJsonSchema(withoutExtensions(schema) as never) as Json;
  return out;
}

/** A document's `components`, its schemas converted one by one (for `doc#/components/schemas/X` refs). */
export function componentsToJsonSchema(components: { schemas?: Record<string, unknown> }): Json {
  const schemas = Object.fromEntries(Object.entries(components.schemas ?? {}).map(([k, v]) => [k, openApiToJsonSchema(v)]));
  return { schemas };
}
