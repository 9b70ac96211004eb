/**
 * The portal's order page in one read (docs/portal.md, "The order page"): the order as its key sees it,
 * where its courier is, its payment with every refund, and its proof. New shapes of their own, so no
 * shape a partner already reads changes.
 */
import Type, { type Static } from 'typebox';
import { DateTime, Nullable, PartnerEnvironment, Uuid } from '../../shared/schemas.js';
import { PartnerOrder } from '../orders/orders.schemas.js';
import { PaymentIntent } from '../payments/payments.schemas.js';
import { OrderProof } from '../proof/proof.schemas.js';
import { OrderTracking } from '../tracking/tracking.schemas.js';

export const PaymentRefund = Type.Object(
  {
    id: Type.String({ description: 'The refund id' }),
    amountQepik: Type.Integer({ minimum: 1, description: 'The amount refunded, in qəpik' }),
    reason: Nullable(Type.String(), { description: 'Why, as the marketplace gave it; null when it gave none' }),
    createdAt: DateTime({ description: 'When it was refunded' }),
  },
  { $id: 'PaymentRefund', additionalProperties: false },
);
export type PaymentRefund = Static<typeof PaymentRefund>;

export const DeveloperOrderView = Type.Object(
  {
    order: PartnerOrder,
    environment: PartnerEnvironment,
    apiKeyId: Uuid({ description: 'The key of your partner the order is assigned to; the order is shown as that key sees it' }),
    tracking: OrderTracking,
    paymentIntent: Nullable(PaymentIntent, { description: 'The order’s payment; null for an order made before payments' }),
    refunds: Type.Array(PaymentRefund, { description: 'Every refund of the payment, oldest first' }),
    proof: Nullable(OrderProof, {
      description: 'The proof of the latest DELIVERED or FAILED that carried one; null when none did yet',
    }),
  },
  {
    $id: 'DeveloperOrderView',
    additionalProperties: false,
    description: 'An order of your keys with its tracking, payment, refunds and proof',
  },
);
export type DeveloperOrderView = Static<typeof DeveloperOrderView>;
