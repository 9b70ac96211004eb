/**
 * Operator view of partners (docs/decisions-log.md, 'Operator API'): a partner organisation and its PARTNER user accounts.
 */
import Type, { type Static } from 'typebox';
import { StringEnum, Uuid } from '../../shared/schemas.js';
import { Phone } from '../auth/auth.schemas.js';

/**
 * The partner's proof policy (docs/tracking-and-proof.md, "The proof policy"): a setting of the partner,
 * carried with its keys' records (key.types.ts) so the proof rules (proof/proof-rules.ts) read it
 * without a query.
 */
export const PROOF_POLICIES = ['NONE', 'LOCATION', 'LOCATION_AND_PHOTO'] as const;
export const ProofPolicy = StringEnum(PROOF_POLICIES, {
  $id: 'ProofPolicy',
  description: 'What a partner must send with DELIVERED and FAILED: nothing, a location, or a location and 1 to 5 photos',
});
export type ProofPolicy = Static<typeof ProofPolicy>;

export const AdminPartnerUser = Type.Object(
  { id: Uuid(), phone: Phone() },
  { $id: 'AdminPartnerUser', additionalProperties: false, description: 'A PARTNER account of the partner' },
);

export const AdminPartner = Type.Object(
  {
    id: Uuid(),
    name: Type.String({ description: 'the partner name (partnerName)' }),
    users: Type.Array(AdminPartnerUser, { description: 'its PARTNER accounts, in the order they joined the partner' }),
  },
  { $id: 'AdminPartner', additionalProperties: false },
);
export type AdminPartner = Static<typeof AdminPartner>;

/** One partner with its settings (the partner read and PATCH): AdminPartner plus proofPolicy. */
export const AdminPartnerDetail = Type.Object(
  {
    ...AdminPartner.properties,
    proofPolicy: ProofPolicy,
  },
  { $id: 'AdminPartnerDetail', additionalProperties: false },
);
export type AdminPartnerDetail = Static<typeof AdminPartnerDetail>;

export const AdminPartners = Type.Object(
  { items: Type.Array(AdminPartner, { description: 'every partner, newest first' }) },
  { $id: 'AdminPartners', additionalProperties: false },
);

export const CreateAdminPartnerDto = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 120, description: '1 to 120 characters; trimmed, must not be blank' }),
    phone: Phone({
      description:
        'the phone of its first PARTNER account: a new account, or an existing CUSTOMER account that becomes the partner user',
    }),
  },
  { $id: 'CreateAdminPartnerDto', additionalProperties: false },
);

export const AddAdminPartnerUserDto = Type.Object(
  {
    phone: Phone({
      description: 'a new account, or an existing CUSTOMER account that becomes a user of this partner',
    }),
  },
  { $id: 'AddAdminPartnerUserDto', additionalProperties: false },
);

export const UpdateAdminPartnerDto = Type.Object(
  { proofPolicy: Type.Optional(ProofPolicy) },
  { $id: 'UpdateAdminPartnerDto', additionalProperties: false },
);
