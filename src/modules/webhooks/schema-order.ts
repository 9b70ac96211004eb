/**
 * Event snapshots come back from a jsonb column, and jsonb keeps object keys in its own order (shortest
 * first). Webhook bodies are read by people too, so before serialising, snapshots are put back into the
 * field order of their schema (PartnerOrder reads code, status, … as in the API answers). Keys the
 * schema does not name keep their place after the named ones; values are never changed.
 */
type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function inSchemaOrder(schema: unknown, value: unknown): unknown {
  if (!isObject(schema)) return value;
  const union = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(union)) {
    const member = union.find((m) => isObject(m) && (isObject(value) ? 'properties' in m : Array.isArray(value) && 'items' in m));
    return member ? inSchemaOrder(member, value) : value;
  }
  if (Array.isArray(value) && isObject(schema.items)) return value.map((v) => inSchemaOrder(schema.items, v));
  if (!isObject(value) || !isObject(schema.properties)) return value;
  const properties = schema.properties;
  const out: Json = {};
  for (const key of Object.keys(properties)) if (key in value) out[key] = inSchemaOrder(properties[key], value[key]);
  for (const key of Object.keys(value)) if (!(key in out)) out[key] = value[key];
  return out;
}
