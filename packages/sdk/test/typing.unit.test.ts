/**
 * The SDK's types stay exact (checked by `npm run typecheck`; at run time these only build clients):
 * paths, parameters and answers come from the generated document, a wrong path or a missing parameter
 * does not compile, and the verified webhook event is a union on `type`.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  createDeveloperClient,
  createPartnerClient,
  type PartnerApiError,
  type Schemas,
  type verifyWebhook,
  type WebhookEvent,
  type WebhookEventEnvelope,
} from '../src/index.js';

describe('@partner-logistics/sdk types', () => {
  it('types calls from the document', () => {
    const partner = createPartnerClient({ apiKey: 'svc_sandbox_typing', baseUrl: 'http://127.0.0.1:1' });
    const dev = createDeveloperClient({ baseUrl: 'http://127.0.0.1:1' });

    expectTypeOf(partner.getOrder).returns.resolves.toEqualTypeOf<Schemas['PartnerOrder']>();
    expectTypeOf(partner.GET<'/v1/partner/orders/{code}', { params: { path: { code: string } } }>).returns.resolves.toEqualTypeOf<
      Schemas['PartnerOrder']
    >();
    expectTypeOf(partner.listOrders)
      .parameter(0)
      .toEqualTypeOf<
        | { status?: Schemas['OrderStatus']; from?: string; to?: string; updatedSince?: string; page?: number; pageSize?: number }
        | undefined
      >();
    expectTypeOf(dev.webhooks.delete).returns.resolves.toEqualTypeOf<void>();
    expectTypeOf(dev.requests.all).returns.toEqualTypeOf<AsyncIterableIterator<Schemas['DeveloperRequest']>>();

    if (Math.random() > 2) {
      // Never run: what must not compile.
      // @ts-expect-error an unknown path
      void partner.GET('/v1/partner/nope');
      // @ts-expect-error a developer path on the partner client
      void partner.GET('/v1/developer/keys');
      // @ts-expect-error a missing path parameter
      void partner.GET('/v1/partner/orders/{code}');
      // @ts-expect-error an event type that does not exist
      void partner.reportEvent('ORD-1', { type: 'TELEPORTED' });
      // @ts-expect-error not a paged list
      void dev.paginate('/v1/developer/keys');
    }
  });

  it('types errors and webhook events', () => {
    expectTypeOf<PartnerApiError['code']>().toEqualTypeOf<string>();
    expectTypeOf<ReturnType<typeof verifyWebhook>>().toEqualTypeOf<WebhookEvent>();
    expectTypeOf<WebhookEvent['type']>().toEqualTypeOf<Schemas['WebhookEvent'] | 'ping'>();
    expectTypeOf<WebhookEventEnvelope<'order.status_changed'>['data']['order']>().toEqualTypeOf<Schemas['PartnerOrder']>();
    expectTypeOf<WebhookEventEnvelope<'ping'>['data']>().toEqualTypeOf<{ webhookId: string }>();
  });
});
