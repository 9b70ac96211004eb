/**
 * The portal's order page in one read (docs/portal.md, "The order page"): 404 when the order is not one
 * of the partner's keys (or does not exist), so "not yours" is the answer's status; within an order,
 * "nothing yet" is an empty part (no location, no refund, no proof).
 */
import { notFound } from '../../errors.js';
import { environmentName } from '../../shared/schemas.js';
import { findPartnerIntentByOrderCode, listRefunds } from '../payments/payments.repo.js';
import { findPartnerProof } from '../proof/proof.repo.js';
import { getAdminTracking, type TrackingDeps } from '../tracking/tracking.service.js';
import { findPartnerOrderOfKey } from './order-view.repo.js';
import type { DeveloperOrderView } from './order-view.schemas.js';

/** What the order page needs (AppContext satisfies it): the database, and the tracking's own. */
export type OrderViewDeps = TrackingDeps;

export async function getDeveloperOrderView(ctx: OrderViewDeps, partnerId: string, code: string): Promise<DeveloperOrderView> {
  const found = await findPartnerOrderOfKey(partnerId, code, ctx.db);
  if (!found) throw notFound('Order');
  // The order is the partner's (checked above): its tracking is read as the operator reads any order's,
  // with the points still buffered.
  const [tracking, paymentIntent, proof] = await Promise.all([
    getAdminTracking(ctx, code),
    findPartnerIntentByOrderCode(partnerId, code, ctx.db),
    findPartnerProof(partnerId, code, ctx.db),
  ]);
  return {
    order: found.order,
    environment: environmentName(found.environment),
    apiKeyId: found.assignedKeyId,
    tracking,
    paymentIntent,
    refunds: paymentIntent ? await listRefunds(paymentIntent.id, ctx.db) : [],
    proof,
  };
}
