/**
 * JSON Schema (TypeBox) → OpenAPI 3.0 Schema Object, for openapi.generator.ts: a schema with `$id`
 * becomes a named component referenced by `$ref`; `T | null` (anyOf with null) becomes `nullable: true`
 * beside a `type`, or `oneOf: [T, { enum: [null] }]` for a reference (docs/openapi.md, "Nullable
 * fields"); `const` becomes a one-value `enum`; `examples` becomes `example`; a record
 * (patternProperties) becomes a map (additionalProperties); every integer says its width.
 */
type Json = Record<string, unknown>;

function isNullSchema(s: unknown): boolean {
  return typeof s === 'object' && s !== null && (s as Json).type === 'null';
}

export class Converter {
  readonly components: Record<string, Json> = {};

  /** Converts a JSON Schema to an OpenAPI 3.0 Schema Object, hoisting `$id` schemas into components. */
  schema(input: unknown, asComponentBody = false): Json {
    if (typeof input !== 'object' || input === null) return {};
    const s = input as Json;
    if (typeof s.$id === 'string' && !asComponentBody) {
      const name = s.$id;
      if (!(name in this.components)) {
        this.components[name] = {}; // reserve first: recursive schemas terminate
        this.components[name] = this.schema(stripExtensions(s), true);
      }
      return { $ref: `#/components/schemas/${name}` };
    }
    const union = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
    if (Array.isArray(union) && union.some(isNullSchema)) {
      const rest = union.filter((u) => !isNullSchema(u));
      const inner = rest.length === 1 ? this.schema(rest[0]) : { anyOf: rest.map((u) => this.schema(u)) };
      const { anyOf: _a, oneOf: _o, ...annotations } = s;
      // docs/openapi.md, "Nullable fields": OpenAPI 3.0.3's `nullable` widens only a `type` in the same
      // schema object, so it is written only there. Anything else (a reference, a composition, an enum,
      // whose list would still refuse null) is `oneOf` of itself and a schema that admits only null.
      if (typeof inner.type === 'string' && typeof inner.$ref !== 'string' && !Array.isArray(inner.enum)) {
        return { ...inner, ...this.annotations(annotations), nullable: true };
      }
      return { oneOf: [inner, { enum: [null] }], ...this.annotations(annotations) };
    }
    const out: Json = {};
    if (s.type === 'integer' && s.format === undefined) out.format = integerFormat(s);
    for (const [key, value] of Object.entries(s)) {
      switch (key) {
        case '$id':
        case '$schema':
        case 'x-error-codes':
          break;
        case 'x-max-length':
          // A length a rule of the service enforces with its own error code rather than ERR_VALIDATION
          // (docs/openapi.md, "OWASP ruleset"): declared as maxLength, not checked by request validation.
          out.maxLength = value;
          break;
        case 'const':
          out.enum = [value];
          if (s.type === undefined)
            out.type = typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'string';
          break;
        case 'examples':
          if (Array.isArray(value) && value.length > 0) out.example = value[0];
          break;
        case 'properties': {
          const props: Json = {};
          for (const [name, prop] of Object.entries(value as Json)) props[name] = this.schema(prop);
          out.properties = props;
          break;
        }
        case 'items':
        case 'not':
          out[key] = this.schema(value);
          break;
        case 'additionalProperties':
          out[key] = typeof value === 'object' ? this.schema(value) : value;
          break;
        case 'patternProperties': {
          // A record (Type.Record: any key) is a map in OpenAPI 3.0, which has no patternProperties.
          const patterns = Object.values(value as Json);
          if (patterns.length === 1) out.additionalProperties = this.schema(patterns[0]);
          break;
        }
        case 'anyOf':
        case 'oneOf':
        case 'allOf':
          out[key] = (value as unknown[]).map((v) => this.schema(v));
          break;
        default:
          out[key] = value;
      }
    }
    return out;
  }

  private annotations(s: Json): Json {
    const out: Json = {};
    for (const key of ['description', 'title', 'default', 'example']) if (key in s) out[key] = s[key];
    if (Array.isArray(s.examples) && s.examples.length > 0) out.example = s.examples[0];
    return out;
  }
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * docs/openapi.md, "OWASP ruleset": every integer says its width. int32 when its declared bounds fit,
 * else int64 (JavaScript numbers: every integer the service reads or writes is a safe integer).
 */
function integerFormat(s: Json): 'int32' | 'int64' {
  const min = typeof s.minimum === 'number' ? s.minimum : null;
  const max = typeof s.maximum === 'number' ? s.maximum : null;
  return min !== null && max !== null && min >= INT32_MIN && max <= INT32_MAX ? 'int32' : 'int64';
}

function stripExtensions(s: Json): Json {
  const { 'x-error-codes': _codes, ...rest } = s;
  return rest;
}
