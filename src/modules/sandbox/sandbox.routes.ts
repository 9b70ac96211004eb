/**
 * The sandbox simulator and go-live checklist (docs/decisions-log.md, 'Sandbox simulator and go-live checklist'): the partner routes (X-Api-Key, sandbox
 * API only) and the developer routes the portal uses (bearer token). The operator's view of the
 * checklists is in ../partners/admin-partners.routes.ts.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sandboxDeveloperRoutes } from './sandbox-developer.routes.js';
import { sandboxPartnerRoutes } from './sandbox-partner.routes.js';
import { sandboxPaymentsRoutes } from './sandbox-payments.routes.js';

export const sandboxRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(sandboxPartnerRoutes);
  await app.register(sandboxPaymentsRoutes);
  await app.register(sandboxDeveloperRoutes);
};
