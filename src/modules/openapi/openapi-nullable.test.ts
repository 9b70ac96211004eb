/**
 * Nullable schemas in a form strict OpenAPI 3.0.3 tools accept (docs/decisions-log.md, 'OpenAPI
 * documents'): a nullable reference as oneOf of the reference and null, `nullable` only beside a type,
 * for the served document and for any schema a later route may add.
 */
import { Ajv } from 'ajv';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { componentsToJsonSchema, openApiToJsonSchema } from '../../../test/openapi-json-schema.js';
import { Nullable, StringEnum } from '../../shared/schemas.js';
import { orderSnapshot } from '../webhooks/webhooks.test-helpers.js';
import { generateOpenApi } from './openapi.generator.js';
import { addFormats, type Doc, setUpServedDocuments } from './openapi.test-helpers.js';

let doc: Doc;
setUpServedDocuments((served) => {
  doc = served.doc;
});

describe('nullable schemas', () => {
  it('writes a nullable reference as oneOf of the reference and null, and nullable only beside a type', () => {
    const order = doc.components.schemas.PartnerOrder as { properties: Record<string, unknown> };
    for (const field of ['zone', 'customer', 'batch']) {
      expect(order.properties[field], field).toEqual(
        expect.objectContaining({ oneOf: [{ $ref: expect.stringMatching(/^#\/components/) }, { enum: [null] }] }),
      );
    }
    // OpenAPI 3.0.3: `nullable` widens only a `type` of the same schema object; anywhere else strict
    // tools ignore it and null is refused.
    const walk = (node: unknown, path: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const o = node as Record<string, unknown>;
      if (o.nullable === true) expect(typeof o.type, `${path} has a type beside nullable`).toBe('string');
      if (o.nullable === true)
        expect('allOf' in o || 'oneOf' in o || 'anyOf' in o || '$ref' in o || 'enum' in o, path).toBe(false);
      for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`);
    };
    walk(doc, '#');
    // Strict Ajv, as Prism compiles schemas: an uncompilable schema (the old `enum: [null, null]`) throws
    // here instead of silently validating nothing.
    const strict = new Ajv({ strict: true, allErrors: true });
    addFormats(strict);
    strict.addKeyword({ keyword: 'components' }); // the holder of the document's schemas
    strict.addSchema({ $id: 'doc', components: componentsToJsonSchema(doc.components) });
    const validate = strict.compile({ $ref: 'doc#/components/schemas/PartnerOrder' });
    // A PartnerOrder as the orders module writes it, without its customer (a key without orders:pii).
    const good = { ...orderSnapshot('ORD-1', 'PACKED'), customer: null };
    expect(validate(good), JSON.stringify(validate.errors)).toBe(true);
    const zone = { id: '0b6f5c1e-2f4a-4c4e-9a53-1f0c2b3d4e5f', name: { az: 'a', ru: 'r', en: 'e' } };
    expect(validate({ ...good, zone })).toBe(true);
    for (const wrong of [
      { ...good, totalQepik: 'string' },
      { ...good, zone: { id: 'not-a-uuid', name: 'Nərimanov' } },
      { ...good, customer: { name: 'x' } },
      { ...good, batch: 'B-1' },
    ]) {
      expect(validate(wrong), JSON.stringify(wrong)).toBe(false);
    }
  });

  it('writes any nullable schema a later route may add in a form strict 3.0.3 tools accept', () => {
    const Named = Type.Object({ a: Type.String({ maxLength: 5 }) }, { $id: 'NamedForNullable', additionalProperties: false });
    const body = Type.Object({
      ref: Nullable(Named),
      text: Nullable(Type.String({ maxLength: 5 })),
      kind: Nullable(StringEnum(['A', 'B'])),
      inline: Nullable(Type.Object({ b: Type.Integer({ minimum: 0, maximum: 9 }) })),
    });
    const generated = generateOpenApi(
      [{ method: 'GET', url: '/v1/partner/x', schema: { response: { 200: body } }, security: null }],
      {
        title: 't',
        description: 'd',
        include: () => true,
        tags: [],
        servers: [{ url: 'https://x.example', description: 'production' }],
      },
    ) as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: Doc['components'] }> }> } }>;
    };
    const props = (
      generated.paths['/v1/partner/x'].get.responses['200'].content['application/json'].schema as unknown as {
        properties: Record<string, unknown>;
      }
    ).properties;
    expect(props.ref).toEqual({ oneOf: [{ $ref: '#/components/schemas/NamedForNullable' }, { enum: [null] }] });
    expect(props.text).toEqual({ type: 'string', maxLength: 5, nullable: true });
    expect(props.kind).toEqual({ oneOf: [{ type: 'string', enum: ['A', 'B'] }, { enum: [null] }] });
    expect(props.inline).toMatchObject({ type: 'object', nullable: true });
    const ajv = new Ajv({ strict: true });
    const validate = ajv.compile(openApiToJsonSchema({ ...(props.kind as object) }) as object);
    expect([validate(null), validate('A'), validate('C')]).toEqual([true, true, false]);
  });
});
