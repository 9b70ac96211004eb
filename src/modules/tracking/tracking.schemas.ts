/**
 * Courier tracking shapes (docs/tracking-and-proof.md, "Location pings" and "Tracking reads").
 */
import Type, { type Static } from 'typebox';
import { DateTime, Nullable, OrderStatus } from '../../shared/schemas.js';

/** Points per request at most. */
export const MAX_POINTS = 100;
/** How far ahead of the server's clock a point's `at` may be. */
export const MAX_FUTURE_MS = 5 * 60_000;
/** Points in a tracking read's trail at most. */
export const TRAIL_LENGTH = 50;

const Lat = (options: Record<string, unknown> = {}) =>
  Type.Number({ minimum: -90, maximum: 90, description: 'latitude, degrees (−90 to 90)', ...options });
const Lng = (options: Record<string, unknown> = {}) =>
  Type.Number({ minimum: -180, maximum: 180, description: 'longitude, degrees (−180 to 180)', ...options });
const AccuracyM = (options: Record<string, unknown> = {}) =>
  Type.Number({ minimum: 0, maximum: 10_000, description: 'horizontal accuracy, metres (0 to 10,000)', ...options });

export const LocationPoint = Type.Object(
  {
    lat: Lat(),
    lng: Lng(),
    accuracyM: Type.Optional(AccuracyM()),
    at: DateTime({ description: "when the courier was there; at most 5 minutes ahead of the server's clock" }),
  },
  { $id: 'LocationPoint', additionalProperties: false },
);

export const CreateLocationsDto = Type.Object(
  {
    points: Type.Array(LocationPoint, {
      minItems: 1,
      maxItems: MAX_POINTS,
      description: '1 to 100 points, oldest first; points older than the latest stored one are ignored (counted)',
    }),
    etaAt: Type.Optional(DateTime({ description: 'the estimated arrival at the customer' })),
  },
  { $id: 'CreateLocationsDto', additionalProperties: false },
);
export type CreateLocationsDto = Static<typeof CreateLocationsDto>;

export const LocationsAccepted = Type.Object(
  {
    accepted: Type.Integer({
      minimum: 0,
      description:
        'the number of points taken; the others were older than the latest one (their number is in the X-Points-Ignored header)',
    }),
  },
  { $id: 'LocationsAccepted', additionalProperties: false },
);
export type LocationsAccepted = Static<typeof LocationsAccepted>;

export const TrackingLocation = Type.Object(
  {
    lat: Lat(),
    lng: Lng(),
    accuracyM: Nullable(AccuracyM()),
    at: DateTime(),
  },
  { $id: 'TrackingLocation', additionalProperties: false, description: "The courier's latest known position" },
);

export const TrailPoint = Type.Object(
  { lat: Lat(), lng: Lng(), at: DateTime() },
  { $id: 'TrailPoint', additionalProperties: false },
);

export const OrderTracking = Type.Object(
  {
    orderCode: Type.String(),
    status: OrderStatus,
    location: Nullable(TrackingLocation, { description: 'null until a location was sent' }),
    etaAt: Nullable(DateTime(), { description: 'the latest ETA sent, null when none was' }),
    trail: Type.Array(TrailPoint, {
      description: 'the last 50 stored points, oldest first (one per 5 s of their times at most)',
    }),
  },
  { $id: 'OrderTracking', additionalProperties: false },
);
export type OrderTracking = Static<typeof OrderTracking>;
