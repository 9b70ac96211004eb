/**
 * Sample events of the webhook event catalog (event-catalog.ts): one realistic order, payment intent and
 * settlement, the `data` of each kind built from them, and a valid envelope of each kind. They are the
 * catalog's examples (`GET /v1/developer/event-types`, the OpenAPI documents) and the bodies of the
 * sample events `POST …/webhooks/{id}/test` sends.
 */
import type { Static } from 'typebox';
import type { OrderStatus } from '../../shared/schemas.js';
import type { PartnerOffer } from '../offers/offers.schemas.js';
import type { PartnerOrder } from '../orders/orders.schemas.js';
import type { PaymentIntent, Settlement } from '../payments/payments.schemas.js';
import type { EventType } from './event-catalog.js';

const AT = '2026-11-20T09:41:07.000Z';
const WEBHOOK_ID = '5b0e7f3c-2d41-4a8e-9c17-6f2b8e1d4a90';

/** A realistic order, as a key with orders:pii sees it, in status `status` with a timeline up to it. */
export function sampleOrder(status: Static<typeof OrderStatus>, at = AT): Static<typeof PartnerOrder> {
  const path = ['PLACED', 'VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED', 'SCANNED_TO_VAN', 'EN_ROUTE'];
  const steps = status === 'CANCELLED' ? ['PLACED', 'CANCELLED'] : [...path.slice(0, Math.max(1, path.indexOf(status) + 1))];
  if (!steps.includes(status)) steps.push(status);
  const t0 = Date.parse(at) - steps.length * 600_000;
  return {
    code: 'ORD-7K2Q9M',
    status,
    paymentMethod: 'COD',
    // A COD order stays UNPAID: the cash collected at the door shows on its payment intent.
    paymentStatus: 'UNPAID',
    totalQepik: 4850,
    codAmountQepik: 4850,
    area: 'Nəsimi',
    zone: { id: '0f6a3c1e-7b2d-4e59-8a14-3d9c2b7e5f01', name: { az: 'Mərkəz', ru: 'Центр', en: 'Centre' } },
    timeWindowStart: new Date(Date.parse(at) + 1_200_000).toISOString(),
    timeWindowEnd: new Date(Date.parse(at) + 8_400_000).toISOString(),
    items: [
      { name: { az: 'Çay dəsti', ru: 'Чайный набор', en: 'Tea set' }, qty: 1, unitPriceQepik: 3250 },
      { name: { az: 'Paxlava', ru: 'Пахлава', en: 'Baklava' }, qty: 2, unitPriceQepik: 800 },
    ],
    timeline: steps.map((s, i) => ({
      status: s as Static<typeof OrderStatus>,
      at: new Date(t0 + (i + 1) * 600_000).toISOString(),
    })),
    customer: {
      name: 'Aysel Məmmədova',
      phone: '+994501234567',
      address: { street: 'Nizami küçəsi 10', details: 'Mənzil 14, 3-cü mərtəbə', lat: 40.3777, lng: 49.8531 },
    },
    batch:
      status === 'SCANNED_TO_VAN' || status === 'EN_ROUTE' || status === 'DELIVERED'
        ? { code: 'BAT-3F8W', status: 'DISPATCHED' }
        : null,
    partnerAssignedAt: status === 'PLACED' ? null : new Date(t0 + 600_000).toISOString(),
    updatedAt: at,
  };
}

/** The `data` of a sample event of each kind (the example, and the sample events sent by the test route). */
export function sampleEventData(type: EventType, webhookId = WEBHOOK_ID, at = AT): Record<string, unknown> {
  switch (type) {
    case 'ping':
      return { webhookId };
    case 'order.placed':
      return { order: sampleOrder('PLACED', at) };
    case 'order.assigned_to_partner':
      return { order: sampleOrder('PACKED', at) };
    case 'order.status_changed':
      return { order: sampleOrder('EN_ROUTE', at), previousStatus: 'SCANNED_TO_VAN' };
    case 'order.delivered':
      return { order: sampleOrder('DELIVERED', at), previousStatus: 'EN_ROUTE' };
    case 'order.cancelled':
      return { order: sampleOrder('CANCELLED', at), previousStatus: 'PLACED' };
    case 'batch.completed':
      return { batch: { code: 'BAT-3F8W', status: 'COMPLETED', orderCodes: ['ORD-7K2Q9M', 'ORD-2M5X8P'] } };
    case 'payment_intent.succeeded':
      return { paymentIntent: samplePaymentIntent('CARD', 'SUCCEEDED', at) };
    case 'payment_intent.refunded':
      return { paymentIntent: { ...samplePaymentIntent('CARD', 'SUCCEEDED', at), amountRefundedQepik: 1600 } };
    case 'payment_intent.collected':
      return { paymentIntent: samplePaymentIntent('COD', 'COLLECTED', at) };
    case 'payment_intent.canceled':
      return { paymentIntent: samplePaymentIntent('COD', 'CANCELED', at) };
    case 'settlement.created':
      return { settlement: sampleSettlement(0, at) };
    case 'settlement.updated':
      return { settlement: sampleSettlement(20_000, at) };
    case 'settlement.settled':
      return { settlement: sampleSettlement(48_350, at) };
    case 'offer.created':
      return sampleOffer('PENDING', at);
    case 'offer.expired':
      return sampleOffer('EXPIRED', at);
    case 'offer.withdrawn':
      return sampleOffer('WITHDRAWN', at);
    case 'order.courier_location': {
      const t = Date.parse(at);
      const point = (i: number) => ({
        lat: 40.3701 + i * 0.0006,
        lng: 49.8402 + i * 0.0015,
        at: new Date(t - (4 - i) * 20_000).toISOString(),
      });
      return {
        tracking: {
          orderCode: 'ORD-7K2Q9M',
          status: 'EN_ROUTE',
          location: { ...point(4), accuracyM: 12 },
          etaAt: new Date(t + 420_000).toISOString(),
          trail: [0, 1, 2, 3, 4].map(point),
        },
      };
    }
  }
}

/**
 * An offer of the sample order (docs/offers.md): created 15 minutes before its deadline; EXPIRED is
 * decided at its deadline (`at`), WITHDRAWN at `at` five minutes after it was made. Never the customer.
 */
export function sampleOffer(status: 'PENDING' | 'EXPIRED' | 'WITHDRAWN', at = AT): Static<typeof PartnerOffer> {
  const t = Date.parse(at);
  const createdAt = new Date(status === 'WITHDRAWN' ? t - 300_000 : status === 'EXPIRED' ? t - 900_000 : t).toISOString();
  const { code, paymentMethod, totalQepik, codAmountQepik, area, zone, timeWindowStart, timeWindowEnd, items } = sampleOrder(
    'PACKED',
    at,
  );
  return {
    id: 'ofr_4Tq8Zm2Xc7Vb1Nk5Hp9Rw3Ld',
    orderCode: code,
    apiKeyId: '3f1c2b9e-8d4a-4e6b-9c1f-2a7d5e8b0c13',
    status,
    createdAt,
    expiresAt: new Date(Date.parse(createdAt) + 900_000).toISOString(),
    decidedAt: status === 'PENDING' ? null : at,
    declineReason: null,
    note: null,
    order: {
      code,
      status: 'PACKED',
      paymentMethod,
      totalQepik,
      codAmountQepik,
      area,
      zone,
      timeWindowStart,
      timeWindowEnd,
      items,
      dropoff: { lat: 40.38, lng: 49.85 },
    },
  };
}

/** A payment intent of the sample order. */
export function samplePaymentIntent(
  method: 'CARD' | 'COD',
  status: Static<typeof PaymentIntent>['status'],
  at = AT,
): Static<typeof PaymentIntent> {
  const received = status === 'SUCCEEDED' || status === 'COLLECTED' || status === 'SETTLED';
  return {
    id: 'pi_3Xb7Qm9Tz2Lw5Kp8Rv1Nc4Hd',
    orderCode: 'ORD-7K2Q9M',
    environment: 'live',
    method,
    status,
    currency: 'AZN',
    amountQepik: 4850,
    amountReceivedQepik: received ? 4850 : 0,
    amountRefundedQepik: 0,
    settlementId: status === 'SETTLED' ? 'stl_7Hq2Wc9Zk4Tn1Bx6Pv3Ly8Md' : null,
    createdAt: new Date(Date.parse(at) - 3_600_000).toISOString(),
    updatedAt: at,
    capturedAt: received ? at : null,
    canceledAt: status === 'CANCELED' ? at : null,
  };
}

/** A settlement of 10 collections after `remitted` qəpik were remitted. */
function sampleSettlement(remitted: number, at: string): Static<typeof Settlement> {
  const due = 48_350;
  return {
    id: 'stl_7Hq2Wc9Zk4Tn1Bx6Pv3Ly8Md',
    environment: 'live',
    periodStart: '2026-11-13T00:00:00.000Z',
    periodEnd: '2026-11-20T00:00:00.000Z',
    status: remitted >= due ? 'SETTLED' : remitted > 0 ? 'PARTIALLY_REMITTED' : 'AWAITING_REMITTANCE',
    collectionsCount: 10,
    expectedQepik: 48_500,
    collectedQepik: 48_350,
    varianceQepik: -150,
    adjustmentsQepik: 0,
    dueQepik: due,
    remittedQepik: remitted,
    outstandingQepik: due - remitted,
    createdAt: at,
    settledAt: remitted >= due ? at : null,
  };
}

/** A valid envelope of each kind. */
export function exampleEnvelope(type: EventType): Record<string, unknown> {
  return {
    id: type === 'ping' ? 'evt_test_4f1c9a7e2b3d4c5e6f708192a3b4c5d6' : 'evt_8Kq3ZpX1mT7wR2vN9cY4bL6d',
    type,
    createdAt: AT,
    environment: 'live',
    data: sampleEventData(type),
  };
}
