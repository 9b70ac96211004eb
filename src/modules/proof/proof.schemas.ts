/**
 * Proof of delivery shapes (docs/tracking-and-proof.md, "Proof on DELIVERED and FAILED").
 */
import Type, { type Static } from 'typebox';
import { DateTime, Nullable, StringEnum } from '../../shared/schemas.js';

export const MAX_PHOTOS = 5;
export const MAX_RECIPIENT_NAME = 120;

export const ProofLocation = Type.Object(
  {
    lat: Type.Number({ minimum: -90, maximum: 90, description: 'latitude, degrees' }),
    lng: Type.Number({ minimum: -180, maximum: 180, description: 'longitude, degrees' }),
    accuracyM: Type.Number({ minimum: 0, maximum: 10_000, description: 'horizontal accuracy, metres (0 to 10,000)' }),
  },
  { $id: 'ProofLocation', additionalProperties: false, description: 'Where the courier was when reporting the event' },
);

export const EventProofDto = Type.Object(
  {
    location: Type.Optional(ProofLocation),
    photoIds: Type.Optional(
      Type.Array(Type.String({ maxLength: 64, description: 'an upload id (upl_…) of your partner' }), {
        minItems: 1,
        maxItems: MAX_PHOTOS,
        uniqueItems: true,
        description: '1 to 5 photos uploaded with POST /v1/partner/uploads',
      }),
    ),
    recipientName: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_RECIPIENT_NAME, description: 'who took the order' })),
  },
  {
    $id: 'EventProofDto',
    additionalProperties: false,
    description:
      "Evidence of a DELIVERED or FAILED event; the partner's proofPolicy makes parts required. A DELIVERED location farther than min(300 + accuracyM, 500) m from the order's address answers 409 ERR_OUTSIDE_GEOFENCE.",
  },
);
export type EventProofDto = Static<typeof EventProofDto>;

export const ProofPhoto = Type.Object(
  {
    id: Type.String({ description: 'the upload id; its bytes: GET /v1/partner/uploads/{id}' }),
    contentType: Type.String({ description: 'image/jpeg or image/png' }),
    bytes: Type.Integer(),
  },
  { $id: 'ProofPhoto', additionalProperties: false },
);

export const OrderProof = Type.Object(
  {
    orderCode: Type.String(),
    event: StringEnum(['DELIVERED', 'FAILED'] as const, { description: 'the event that carried the proof' }),
    at: DateTime({ description: 'when the event was recorded' }),
    location: Nullable(ProofLocation),
    distanceM: Nullable(Type.Number({ minimum: 0 }), {
      description: "metres from the order's address; null without a location or when the address has no coordinates",
    }),
    photos: Type.Array(ProofPhoto),
    recipientName: Nullable(Type.String()),
  },
  { $id: 'OrderProof', additionalProperties: false, description: "The proof of the order's latest event that carried one" },
);
export type OrderProof = Static<typeof OrderProof>;
