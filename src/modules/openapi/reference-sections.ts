/**
 * Chapters of the reference page that are not operations: tags of the OpenAPI document whose
 * description Redoc renders as a chapter of its own (x-traitTag). The rules they state are those of
 * docs/webhook-signatures.md and docs/compatibility.md, shortened for partners.
 */

export const SIGNATURES_TAG = 'Verifying webhooks';
export const COMPATIBILITY_TAG = 'Compatibility';

const signatures = [
  'Every delivery carries two sets of signature headers, made with the same signing secret (`whsec_…`, shown once when',
  'the webhook is created or its secret rotated). Verify **either** set; both cover the raw body exactly as received',
  '(verify before parsing JSON), and both carry one signature per live secret during a rotation grace.',
  '',
  "**1. `X-Partner-Signature: t=<unix seconds>,v1=<hex>`** (Stripe's scheme): `v1` is the hex HMAC-SHA256 of",
  '`<t>.<raw body>` keyed with the **whole secret string** (UTF-8). Refuse `t` more than 5 minutes from your clock.',
  '',
  '```js',
  "const { createHmac, timingSafeEqual } = require('node:crypto');",
  'const [, t] = header.match(/t=(\\d+)/);',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript shown to readers, not run here
  "const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex');",
  "const ok = header.split(',').some((p) => p.startsWith('v1=') && p.length === 67 &&",
  '  timingSafeEqual(Buffer.from(p.slice(3)), Buffer.from(expected)));',
  '// or: stripe.webhooks.constructEvent(rawBody, header, secret)',
  '```',
  '',
  '**2. Standard Webhooks** (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`): the signature is the',
  "base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the **secret's bytes**, the base64",
  'after `whsec_`. `webhook-id` is the event id (the same on every attempt: de-duplicate by it); `webhook-timestamp`',
  'equals `t`. Any Standard Webhooks library verifies it with the secret string as shown:',
  '',
  '```js',
  "const { Webhook } = require('standardwebhooks');",
  'const event = new Webhook(secret).verify(rawBody, {',
  "  'webhook-id': req.headers['webhook-id'],",
  "  'webhook-timestamp': req.headers['webhook-timestamp'],",
  "  'webhook-signature': req.headers['webhook-signature'],",
  '}); // throws on a wrong signature or a timestamp more than 5 minutes away',
  '```',
  '',
  'Secrets made before secrets were written in standard base64 are base64url after `whsec_` (they may hold `-` or `_`):',
  'their Standard Webhooks signature is keyed with the base64url-decoded bytes. Such a string works unchanged with',
  '`X-Partner-Signature` and with the SDK; for a Standard Webhooks library, rotate the secret',
  '(`POST /v1/developer/webhooks/{id}/rotate-secret`), or give it the same bytes in standard base64.',
  '',
  'The SDK does both: `verifyWebhook(rawBody, req.headers, secret)` checks whichever set the request carries and',
  'returns the event.',
].join('\n');

const compatibility = [
  'Within `/v1` we only **add**; nothing a working integration relies on changes. We may add:',
  '',
  '- new operations (paths or methods);',
  '- new optional request fields and query parameters;',
  '- new response fields, only in new schemas: an existing response schema is closed (`additionalProperties: false`)',
  '  and keeps its fields;',
  '- new webhook event kinds, sent only to webhooks subscribed to them;',
  '- new values of an enumeration used in requests.',
  '',
  'We never remove or rename a field, change its type or nullability, change a status code or an error code, or',
  'change what an event kind means. Build clients that ignore unknown webhook kinds and unknown headers.',
  '',
  'A change that would break any of this comes as a new version (`/v2`) beside `/v1`. Before an operation or an',
  'event kind is retired, it is marked `deprecated` in this document and announced in the release notes and here at',
  'least 6 months ahead, and it keeps working until then. The full policy is `docs/compatibility.md` in the repository.',
].join('\n');

/** The tags that carry the chapters (add them to the document's tags). */
export function referenceTags(): Array<{ name: string; description: string; 'x-traitTag': true }> {
  return [
    { name: SIGNATURES_TAG, description: signatures, 'x-traitTag': true },
    { name: COMPATIBILITY_TAG, description: compatibility, 'x-traitTag': true },
  ];
}
