import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import type { CatalogRoute } from '../../plugins/route-catalog.js';
import { PrecompressedBody } from '../../shared/precompressed.js';
import { errorResponses } from '../../shared/schemas.js';
import { generateOpenApi } from './openapi.generator.js';
import {
  FAVICON,
  REDOC_LOGO_URL,
  REDOC_OPTIONS,
  REFERENCE_CSP,
  REFERENCE_SCRIPT,
  REFERENCE_SECTIONS,
  type ReferenceSection,
  referencePage,
  sectionDocument,
} from './reference-page.js';
import { createReferenceRenderer } from './reference-render.js';
import { referenceTags } from './reference-sections.js';
import { webhookEventsTag } from './webhook-events-section.js';

const OpenApiDocument = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: 'An OpenAPI 3.0.0 document',
});

const PARTNER_DESCRIPTION = [
  'The partner order API (authenticated by an `X-Api-Key` header) and the developer API (keys, webhooks,',
  'deliveries; authenticated by a bearer access token of a PARTNER account).',
  '',
  'Every error is `{ statusCode, code, message, details? }`; switch on `code`. Money fields are integers in',
  'qəpik. The live API accepts only `svc_live_…` keys, the sandbox API only `svc_sandbox_…` keys.',
  '',
  'Webhook deliveries carry `X-Partner-Signature: t=<unix>,v1=<hex>`, the HMAC-SHA256 of `<t>.<raw body>`',
  'keyed with the webhook signing secret, and the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,',
  '`webhook-signature`): see "Verifying webhooks". Within `/v1` we only add: see "Compatibility".',
].join('\n');

export const isPartnerOrDeveloperRoute = (r: CatalogRoute) =>
  r.url.startsWith('/v1/partner/') || r.url.startsWith('/v1/developer/');

/**
 * The OpenAPI documents (docs/decisions-log.md, 'OpenAPI documents') and the API reference page:
 *   GET /v1/developer/openapi.json  the reduced document: partner and developer operations only (public)
 *   GET /v1/openapi.json            the full document, operator (admin) and sign-in routes included (public)
 *   GET /docs, /docs/developer, /docs/events   the API reference pages (Redoc, served locally), one section
 *                                   of the reduced document each (reference-page.ts)
 */
export const openapiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { publicUrl, sandboxPublicUrl } = app.ctx.config;
  const servers = [
    // x-internal: false: both are for partners (docs/openapi.md, "OWASP ruleset").
    { url: publicUrl, description: 'Live API (production): svc_live_… keys', 'x-internal': false },
    { url: sandboxPublicUrl, description: 'Sandbox API: svc_sandbox_… keys, test orders and the simulator', 'x-internal': false },
  ];
  let reduced: Record<string, unknown> | null = null;
  let full: Record<string, unknown> | null = null;

  const reducedDocument = () => {
    reduced ??= generateOpenApi(app.routeCatalog, {
      title: 'Partner Logistics and Developer API',
      description: PARTNER_DESCRIPTION,
      include: isPartnerOrDeveloperRoute,
      servers,
      tags: [
        { name: 'partner', description: 'Orders assigned to your API key, and logistics events (X-Api-Key)' },
        { name: 'developer', description: 'API keys, webhooks and deliveries of your partner account (bearer token)' },
        webhookEventsTag(),
        ...referenceTags(),
      ],
    });
    return reduced;
  };
  const fullDocument = () => {
    full ??= generateOpenApi(app.routeCatalog, {
      title: 'Partner Logistics API — full (operators)',
      description: `${PARTNER_DESCRIPTION}\n\nThis full document also holds sign-in (/v1/auth) and the operator API (/v1/admin, ADMIN accounts).`,
      include: (r) => r.url.startsWith('/v1/'),
      servers,
      tags: [
        { name: 'partner', description: 'Orders assigned to your API key, and logistics events (X-Api-Key)' },
        { name: 'developer', description: 'API keys, webhooks and deliveries of your partner account (bearer token)' },
        { name: 'auth', description: 'Sign-in with a one-time code; access and refresh tokens' },
        { name: 'admin', description: 'Operator API (ADMIN accounts)' },
        webhookEventsTag(),
        ...referenceTags(),
      ],
    });
    return full;
  };
  // Each document as sent: serialised once by its route's serializer (about 400 KB of JSON, some
  // milliseconds of CPU a time), compressed once per coding, revalidated by ETag (src/shared/precompressed.ts).
  let reducedSent: PrecompressedBody | null = null;
  let fullSent: PrecompressedBody | null = null;
  const reducedBytes = (reply: FastifyReply) => {
    reducedSent ??= PrecompressedBody.json(reply, reducedDocument());
    return reducedSent;
  };
  const fullBytes = (reply: FastifyReply) => {
    fullSent ??= PrecompressedBody.json(reply, fullDocument());
    return fullSent;
  };

  app.get(
    '/v1/developer/openapi.json',
    {
      schema: {
        summary: 'The OpenAPI document of the partner and developer API',
        description:
          'Public: no token needed. OpenAPI 3.0.0, generated from the schemas the service validates with. Sent compressed ' +
          'when the request accepts it (Brotli or gzip) and with an ETag: a request whose If-None-Match names it is ' +
          'answered 304 Not Modified, without a body.',
        tags: ['developer'],
        operationId: 'getOpenApiDocument',
        // 400: a request the HTTP parser refuses (malformed headers or URL) is answered on every route.
        response: { 200: OpenApiDocument, ...errorResponses('ERR_BAD_REQUEST') },
      },
    },
    async (request, reply) => reducedBytes(reply).send(request, reply),
  );

  app.get('/v1/openapi.json', { schema: { hide: true, response: { 200: OpenApiDocument } } }, async (request, reply) =>
    fullBytes(reply).send(request, reply),
  );

  const require = createRequire(import.meta.url);
  const redocBundle = require.resolve('redoc/bundles/redoc.standalone.js');
  let redocSource: PrecompressedBody | null = null;

  app.get('/docs/redoc.standalone.js', { schema: { hide: true } }, async (request, reply) => {
    // Redoc's sidebar credit shows a logo from Redocly's CDN: the page would ask a third party for it
    // (and the policy would refuse it). Pointed at an empty image, the credit hides its logo by itself.
    redocSource ??= new PrecompressedBody(
      readFileSync(redocBundle, 'utf8').replaceAll(REDOC_LOGO_URL, 'data:,'),
      'application/javascript; charset=utf-8',
      'public, max-age=3600',
    );
    return redocSource.send(request, reply);
  });

  app.get('/docs/favicon.svg', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON);
  });

  app.get('/docs/reference.js', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type('application/javascript; charset=utf-8').send(REFERENCE_SCRIPT);
  });

  const sectionDocuments = new Map<string, Record<string, unknown>>();
  const sectionDocumentOf = (section: ReferenceSection) => {
    let document = sectionDocuments.get(section.path);
    if (!document) {
      document = sectionDocument(reducedDocument(), section);
      sectionDocuments.set(section.path, document);
    }
    return document;
  };
  const renderer = createReferenceRenderer({
    jobs: (firstPath) =>
      [...REFERENCE_SECTIONS]
        .sort((a, b) => Number(b.path === firstPath) - Number(a.path === firstPath))
        .map((s) => ({ path: s.path, specUrl: s.document, document: sectionDocumentOf(s), options: REDOC_OPTIONS })),
    logoUrl: REDOC_LOGO_URL,
    log: app.log,
  });
  app.addHook('onClose', () => renderer.close());

  const HTML = 'text/html; charset=utf-8';
  for (const section of REFERENCE_SECTIONS) {
    const page = new PrecompressedBody(referencePage(section), HTML);
    // The page the server rendered (about 1 MB of HTML) once it has one; until then the browser renders it.
    let renderedPage: PrecompressedBody | null = null;
    app.get(section.path, { schema: { hide: true } }, async (request, reply) => {
      if (!renderedPage) {
        const rendered = app.ctx.config.referenceServerRender ? renderer.rendered(section.path) : null;
        if (rendered) renderedPage = new PrecompressedBody(referencePage(section, rendered), HTML);
      }
      reply.header('content-security-policy', REFERENCE_CSP);
      return (renderedPage ?? page).send(request, reply);
    });
    let sectionSent: PrecompressedBody | null = null;
    app.get(section.document, { schema: { hide: true } }, async (request, reply) => {
      sectionSent ??= PrecompressedBody.json(reply, sectionDocumentOf(section));
      return sectionSent.send(request, reply);
    });
  }
};
