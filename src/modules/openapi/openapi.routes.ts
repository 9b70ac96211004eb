import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { CatalogRoute } from '../../plugins/route-catalog.js';
import { errorResponses } from '../../shared/schemas.js';
import { generateOpenApi } from './openapi.generator.js';
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
 *   GET /docs                       the API reference page (Redoc, served locally) rendering the reduced document
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

  app.get(
    '/v1/developer/openapi.json',
    {
      schema: {
        summary: 'The OpenAPI document of the partner and developer API',
        description: 'Public: no token needed. OpenAPI 3.0.0, generated from the schemas the service validates with.',
        tags: ['developer'],
        operationId: 'getOpenApiDocument',
        // 400: a request the HTTP parser refuses (malformed headers or URL) is answered on every route.
        response: { 200: OpenApiDocument, ...errorResponses('ERR_BAD_REQUEST') },
      },
    },
    async () => reducedDocument(),
  );

  app.get('/v1/openapi.json', { schema: { hide: true, response: { 200: OpenApiDocument } } }, async () => fullDocument());

  const require = createRequire(import.meta.url);
  const redocBundle = require.resolve('redoc/bundles/redoc.standalone.js');
  let redocSource: Buffer | null = null;

  app.get('/docs/redoc.standalone.js', { schema: { hide: true } }, async (_request, reply) => {
    // Redoc's sidebar credit shows a logo from Redocly's CDN: the page would ask a third party for it
    // (and the policy would refuse it). Pointed at an empty image, the credit hides its logo by itself.
    redocSource ??= Buffer.from(readFileSync(redocBundle, 'utf8').replaceAll(REDOC_LOGO_URL, 'data:,'));
    return reply.type('application/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(redocSource);
  });

  app.get('/docs/favicon.svg', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON);
  });

  app.get('/docs/reference.js', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type('application/javascript; charset=utf-8').send(REFERENCE_SCRIPT);
  });

  app.get('/docs', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type('text/html; charset=utf-8').header('content-security-policy', REFERENCE_CSP).send(REFERENCE_PAGE);
  });
};

/**
 * The page loads nothing from outside this service: system fonts, the bundled Redoc, and a policy that
 * holds the browser to it (Redoc's sidebar credit would fetch a logo from its CDN; refused, it hides
 * itself). Styles are inline (Redoc's styled-components); its search index runs in a blob worker.
 */
const REFERENCE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const REDOC_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

/** The reference page's icon: a webhook-ish mark in the portal's blue. */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d4ed8"/><path d="M9 21a4 4 0 1 0 4-4M16 9a4 4 0 1 0-3.5 6l3.5 6M23 21a4 4 0 1 0-3.6-5.8H13" fill="none" stroke="#fff" stroke-width="2.4" stroke-linecap="round"/></svg>`;

const FONTS = 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif';
/**
 * Redoc with the page's own fonts, then what keyboard and screen-reader users need (checked with axe
 * in the browser tests): every code block Redoc renders (it renders lazily, so a mutation observer
 * follows it) can take focus, so a block wider than a phone can be scrolled with the keyboard; menu
 * entries are named by what they show; and the page has a banner with the way back to the developer
 * portal and a main landmark around Redoc.
 */
const REFERENCE_SCRIPT = `Redoc.init('/v1/developer/openapi.json', ${JSON.stringify({
  hideDownloadButton: false,
  expandResponses: '200,201',
  theme: {
    typography: {
      fontFamily: FONTS,
      headings: { fontFamily: FONTS },
      code: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' },
    },
  },
})}, document.getElementById('redoc'));
(function () {
  var root = document.getElementById('redoc');
  var fix = function () {
    var blocks = root.querySelectorAll('pre:not([tabindex])');
    for (var i = 0; i < blocks.length; i++) blocks[i].setAttribute('tabindex', '0');
    // A menu entry's label is its summary alone, while it shows the HTTP method too: its name comes from
    // what it shows instead.
    var labelled = root.querySelectorAll('.menu-content li[aria-label]');
    for (var j = 0; j < labelled.length; j++) labelled[j].removeAttribute('aria-label');
  };
  new MutationObserver(fix).observe(root, { childList: true, subtree: true, attributes: true, attributeFilter: ['aria-label'] });
  fix();
})();
`;

const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Partner API reference</title>
    <link rel="icon" href="/docs/favicon.svg" type="image/svg+xml" />
    <style>
      body { margin: 0; font-family: ${FONTS}; }
      .reference-bar { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; padding: 0.5rem 1rem; background: #1d4ed8; color: #fff; }
      .reference-bar a { color: #fff; font-weight: 600; }
      .reference-bar a:focus-visible { outline: 3px solid #fff; outline-offset: 2px; }
      .reference-bar p { margin: 0; }
    </style>
  </head>
  <body>
    <header class="reference-bar">
      <p><a href="/portal/" data-testid="back-to-portal">← Developer portal</a></p>
      <p>Partner API reference</p>
    </header>
    <main id="redoc"></main>
    <script src="/docs/redoc.standalone.js"></script>
    <script src="/docs/reference.js"></script>
  </body>
</html>
`;
