/**
 * The API reference pages (docs/openapi.md, "The reference page"): Redoc, served locally, on one section of
 * the partner and developer document at a time. Redoc builds every operation of its document before its
 * first screen shows, so the whole document in one page took seconds of main-thread work; each section is
 * the document reduced to its tags, and the banner links the sections. The whole document stays at
 * GET /v1/developer/openapi.json.
 */
import type { RenderedReference } from './reference-render.js';
import { COMPATIBILITY_TAG, SIGNATURES_TAG } from './reference-sections.js';
import { WEBHOOK_EVENTS_TAG } from './webhook-events-section.js';

export interface ReferenceSection {
  /** The page. */
  path: string;
  /** The section's document. */
  document: string;
  title: string;
  /** The tags of the document the section shows (operations and chapters). */
  tags: readonly string[];
}

export const REFERENCE_SECTIONS: readonly ReferenceSection[] = [
  {
    path: '/docs',
    document: '/docs/partner.json',
    title: 'Partner API',
    tags: ['partner', SIGNATURES_TAG, COMPATIBILITY_TAG],
  },
  { path: '/docs/developer', document: '/docs/developer.json', title: 'Developer API', tags: ['developer'] },
  { path: '/docs/events', document: '/docs/events.json', title: 'Webhook events', tags: [WEBHOOK_EVENTS_TAG] },
];

/** The document reduced to a section: its tags, and the operations tagged with one of them. */
export function sectionDocument(doc: Record<string, unknown>, section: ReferenceSection): Record<string, unknown> {
  const keep = new Set(section.tags);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { tags?: string[] }>>)) {
    const ops = Object.entries(item).filter(([, op]) => op.tags?.some((t) => keep.has(t)));
    if (ops.length > 0) paths[path] = Object.fromEntries(ops);
  }
  const tags = (doc.tags as Array<{ name: string }>).filter((t) => keep.has(t.name));
  return { ...doc, tags, paths };
}

/**
 * The page loads nothing from outside this service: system fonts, the bundled Redoc, and a policy that
 * holds the browser to it (Redoc's sidebar credit would fetch a logo from its CDN; refused, it hides
 * itself). Styles are inline (Redoc's styled-components); its search index runs in a blob worker.
 */
export const REFERENCE_CSP = [
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

export const REDOC_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

/** The reference page's icon: a webhook-ish mark in the portal's blue. */
export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d4ed8"/><path d="M9 21a4 4 0 1 0 4-4M16 9a4 4 0 1 0-3.5 6l3.5 6M23 21a4 4 0 1 0-3.6-5.8H13" fill="none" stroke="#fff" stroke-width="2.4" stroke-linecap="round"/></svg>`;

const FONTS = 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif';

/** Redoc's options, the same for the page rendered by the server and the page rendered by the browser. */
export const REDOC_OPTIONS = {
  hideDownloadButton: false,
  expandResponses: '200,201',
  theme: {
    typography: {
      fontFamily: FONTS,
      headings: { fontFamily: FONTS },
      code: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' },
    },
  },
};

/** The id of the data block that carries the server render's state. */
const STATE_ID = 'redoc-state';

/**
 * Redoc with the page's own fonts: taking over the page the server rendered (its state is in a data
 * block, the policy allows no inline script), or rendering the section's document itself while the
 * server has no render of it yet. Then what keyboard and screen-reader users need (checked with axe
 * in the browser tests): every code block Redoc renders (it renders lazily, so a mutation observer
 * follows it) can take focus, so a block wider than a phone can be scrolled with the keyboard; menu
 * entries are named by what they show; and the page has a banner with the way back to the developer
 * portal and a main landmark around Redoc.
 */
export const REFERENCE_SCRIPT = `(function () {
  var root = document.getElementById('redoc');
  var state = document.getElementById('${STATE_ID}');
  if (state) {
    Redoc.hydrate(JSON.parse(state.textContent), root, function (error) {
      console.error('Redoc could not take over the rendered page: ' + (error && error.message));
    });
  } else {
    Redoc.init(root.getAttribute('data-spec'), ${JSON.stringify(REDOC_OPTIONS)}, root);
  }
})();
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

/**
 * The page of one section: the banner (the way back, the sections), then Redoc on the section's document:
 * with `rendered`, the server's render of it and the state the browser's Redoc takes it over from.
 */
export function referencePage(current: ReferenceSection, rendered?: RenderedReference): string {
  const links = REFERENCE_SECTIONS.map((s) =>
    s === current
      ? `<li><a href="${s.path}" aria-current="page">${s.title}</a></li>`
      : `<li><a href="${s.path}">${s.title}</a></li>`,
  ).join('');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${current.title}: Partner API reference</title>
    <link rel="icon" href="/docs/favicon.svg" type="image/svg+xml" />
    <style>
      body { margin: 0; font-family: ${FONTS}; }
      .reference-bar { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; padding: 0.5rem 1rem; background: #1d4ed8; color: #fff; }
      .reference-bar a { color: #fff; font-weight: 600; }
      .reference-bar a:focus-visible { outline: 3px solid #fff; outline-offset: 2px; }
      .reference-bar p, .reference-bar ul { margin: 0; }
      .reference-bar ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; list-style: none; padding: 0; }
      .reference-bar a[aria-current] { text-decoration: none; border-bottom: 2px solid #fff; }
    </style>${rendered ? `\n    ${rendered.styles}` : ''}
  </head>
  <body>
    <header class="reference-bar">
      <p><a href="/portal/" data-testid="back-to-portal">← Developer portal</a></p>
      <p>Partner API reference</p>
      <nav aria-label="Reference sections"><ul>${links}</ul></nav>
      <p><a href="/v1/developer/openapi.json">The whole OpenAPI document</a></p>
    </header>
    <main id="redoc" data-spec="${current.document}">${rendered?.html ?? ''}</main>${rendered ? `\n    <script type="application/json" id="${STATE_ID}">${rendered.state}</script>` : ''}
    <script src="/docs/redoc.standalone.js"></script>
    <script src="/docs/reference.js"></script>
  </body>
</html>
`;
}
