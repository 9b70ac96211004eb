import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { errorResponses } from '../../shared/schemas.js';
import { createAccountsService } from '../auth/accounts.service.js';
import { AdminUser, UpdateAdminUserDto } from '../auth/auth.schemas.js';
import { partnerChecklists } from '../sandbox/checklist.service.js';
import { PartnerChecklists } from '../sandbox/sandbox.schemas.js';
import {
  AddAdminPartnerUserDto,
  AdminPartner,
  AdminPartnerDetail,
  AdminPartners,
  CreateAdminPartnerDto,
  UpdateAdminPartnerDto,
} from './partners.schemas.js';
import { createPartnersService } from './partners.service.js';

const IdParams = Type.Object({ id: Type.String({ description: 'a uuid; anything else answers 404' }) });

/** Operator partner and account management (docs/decisions-log.md, 'Operator API'): ADMIN bearer token. */
export const adminPartnersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const partners = createPartnersService(app.ctx);
  const accounts = createAccountsService(app.ctx);

  app.post(
    '/v1/admin/partners',
    {
      onRequest: app.requireAdmin,
      schema: {
        summary: 'Create a partner',
        description:
          'Creates a partner and makes `phone` its first PARTNER account: a new account, or an existing ' +
          'CUSTOMER account. A phone of a PARTNER or ADMIN account answers 409 ERR_CONFLICT.',
        tags: ['admin'],
        operationId: 'createPartner',
        body: CreateAdminPartnerDto,
        response: { 201: AdminPartner, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_CONFLICT') },
      },
    },
    async (request, reply) => reply.status(201).send(await partners.createPartner(request.body)),
  );

  app.post(
    '/v1/admin/partners/:id/users',
    {
      onRequest: app.requireAdmin,
      schema: {
        summary: 'Add a user to a partner',
        description:
          'Makes `phone` a PARTNER account of the partner (same rules as creation) and answers the partner ' +
          'with all its users.',
        tags: ['admin'],
        operationId: 'addPartnerUser',
        params: IdParams,
        body: AddAdminPartnerUserDto,
        response: { 201: AdminPartner, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND', 'ERR_CONFLICT') },
      },
    },
    async (request, reply) => reply.status(201).send(await partners.addPartnerUser(request.params.id, request.body.phone)),
  );

  app.get(
    '/v1/admin/partners',
    {
      onRequest: app.requireAdmin,
      schema: {
        summary: 'List partners',
        description: 'Every partner with its PARTNER accounts, newest partner first.',
        tags: ['admin'],
        operationId: 'listPartners',
        response: { 200: AdminPartners, ...errorResponses(401, 403) },
      },
    },
    async () => partners.listPartners(),
  );

  app.patch(
    '/v1/admin/partners/:id',
    {
      onRequest: app.requireAdmin,
      schema: {
        summary: 'Change a partner',
        description:
          "Sets the partner's proofPolicy (NONE, LOCATION or LOCATION_AND_PHOTO): what its DELIVERED and " +
          'FAILED events must carry as proof. Takes effect on its next request, in every process.',
        tags: ['admin'],
        operationId: 'updatePartner',
        params: IdParams,
        body: UpdateAdminPartnerDto,
        response: { 200: AdminPartnerDetail, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => partners.updatePartner(request.params.id, request.body),
  );

  app.get(
    '/v1/admin/partners/:id',
    {
      onRequest: app.requireAdmin,
      schema: {
        summary: 'Read a partner',
        description: 'The partner with its PARTNER accounts and its settings (proofPolicy). An unknown partner answers 404.',
        tags: ['admin'],
        operationId: 'getPartner',
        params: IdParams,
        response: { 200: AdminPartnerDetail, ...errorResponses(401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => partners.getPartner(request.params.id),
  );

  app.get(
    '/v1/admin/partners/:id/checklist',
    {
      onRequest: app.requireAdmin,
      schema: {
        summary: "Read a partner's go-live checklists",
        description:
          'The go-live checklist of every sandbox key of the partner, newest key first (as GET ' +
          '/v1/developer/keys/{id}/checklist answers it to the partner). An unknown partner answers 404.',
        tags: ['admin'],
        operationId: 'getPartnerChecklists',
        params: IdParams,
        response: { 200: PartnerChecklists, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => partnerChecklists(app.ctx, request.params.id),
  );

  app.patch(
    '/v1/admin/users/:id',
    {
      onRequest: app.requireAdmin,
      schema: {
        summary: 'Block or unblock an account',
        description:
          'A blocked account cannot request codes, sign in or refresh (403 ERR_USER_BLOCKED); blocking also ' +
          'revokes all its refresh tokens. Access tokens already issued run out within 15 minutes. An ' +
          'operator cannot block their own account (409 ERR_CONFLICT).',
        tags: ['admin'],
        operationId: 'updateUser',
        params: IdParams,
        body: UpdateAdminUserDto,
        response: { 200: AdminUser, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND', 'ERR_CONFLICT') },
      },
    },
    async (request) => {
      const actor = request.principal;
      if (!actor) throw new Error('requireAdmin ran without a principal');
      return accounts.setUserBlocked(actor.userId, request.params.id, request.body.blocked);
    },
  );
};
