/**
 * The "Webhook events" section of the reference page: a tag of the OpenAPI document whose description
 * Redoc renders as a chapter of its own (x-traitTag). Generated from the event catalog
 * (src/modules/webhooks/event-catalog.ts), the schemas the worker serialises bodies with: each kind,
 * when it fires, its envelope schema (Redoc's <SchemaDefinition> of the component) and an example.
 */
import { EVENT_DESCRIPTIONS, EVENT_SCHEMAS, EVENT_TYPES } from '../webhooks/event-catalog.js';
import { exampleEnvelope } from '../webhooks/event-samples.js';

export const WEBHOOK_EVENTS_TAG = 'Webhook events';

function section(): string {
  const intro = [
    'Every delivery is a POST of one JSON envelope `{ id, type, createdAt, environment, data }` with the headers',
    '`X-Partner-Signature: t=<unix>,v1=<hex>` (HMAC-SHA256 of `<t>.<raw body>` keyed with the signing secret; during a',
    "secret rotation's grace a second `v1` signed with the previous secret), the Standard Webhooks headers `webhook-id`,",
    '`webhook-timestamp` and `webhook-signature` (see "Verifying webhooks"), `X-Partner-Event` (the type) and',
    '`X-Partner-Delivery` (the delivery id). Answer 2xx within 10 s; anything else is retried after 1 min, 5 min, 30 min,',
    '2 h and 12 h. Delivery is at least once: de-duplicate by the envelope `id`.',
    '',
    'The same catalog, as JSON Schemas with examples, is `GET /v1/developer/event-types`; every envelope is also a',
    'component of this document (`WebhookEventEnvelope` and one schema per kind).',
  ].join('\n');
  const kinds = EVENT_TYPES.map((type) =>
    [
      `## ${type}`,
      '',
      EVENT_DESCRIPTIONS[type],
      '',
      `<SchemaDefinition schemaRef="#/components/schemas/${(EVENT_SCHEMAS[type] as { $id?: string }).$id}" showReadOnly={true} showWriteOnly={true} />`,
      '',
      'Example:',
      '',
      '```json',
      JSON.stringify(exampleEnvelope(type), null, 2),
      '```',
    ].join('\n'),
  );
  return [intro, ...kinds].join('\n\n');
}

/** The tag that carries the section (add it to the document's tags). */
export function webhookEventsTag(): { name: string; description: string; 'x-traitTag': true } {
  return { name: WEBHOOK_EVENTS_TAG, description: section(), 'x-traitTag': true };
}
