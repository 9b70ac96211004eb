/**
 * The rules of an event's proof (docs/tracking-and-proof.md, "Proof on DELIVERED and FAILED"), kept
 * apart from the event path so that path only calls them:
 *  - `checkEventProof` before the order is looked up (the body and the partner's policy: 400s). No
 *    promise and no query unless photos are named (their ownership is one query).
 *  - `proofOfEvent` on the locked order once the event is accepted by the state machine: the geofence
 *    (409, against the address point read with the order's lock) and the row to write. No query.
 *  - `recordProofs` writes a transaction's proofs in one statement.
 */
import type { Queryable } from '../../db/db.js';
import { AppError, validationError } from '../../errors.js';
import type { ResolvedKey } from '../keys/key.types.js';
import { findUploads } from '../uploads/uploads.repo.js';
import { insertProofs, type NewProof } from './proof.repo.js';

export type { NewProof };

import type { EventProofDto } from './proof.schemas.js';

/** What of an event body the proof rules read. */
export interface ProofEventBody {
  type: string;
  proof?: EventProofDto;
}

const PROVABLE = new Set(['DELIVERED', 'FAILED']);

/** Body and policy rules (400s), before the order is looked up. A promise only when photos are named. */
export function checkEventProof(key: ResolvedKey, body: ProofEventBody, q: Queryable): void | Promise<void> {
  const proof = body.proof;
  if (proof !== undefined && !PROVABLE.has(body.type)) {
    throw new AppError('ERR_BAD_REQUEST', 'proof is only allowed on a DELIVERED or FAILED event');
  }
  if (!PROVABLE.has(body.type)) return;
  const policy = key.proofPolicy;
  if (policy !== 'NONE' && proof?.location === undefined) {
    throw new AppError(
      'ERR_LOCATION_REQUIRED',
      `Your partner's proof policy (${policy}) requires proof.location on ${body.type}`,
    );
  }
  if (policy === 'LOCATION_AND_PHOTO' && (proof?.photoIds === undefined || proof.photoIds.length === 0)) {
    throw validationError('proof.photoIds', `is required by your partner's proof policy (${policy}): 1 to 5 upload ids`);
  }
  const ids = proof?.photoIds;
  if (!ids || ids.length === 0) return;
  return findUploads(key.partnerId, ids, q).then((found) => {
    if (found.length !== new Set(ids).size) {
      const known = new Set(found.map((u) => u.id));
      const unknown = ids.filter((id) => !known.has(id));
      throw validationError('proof.photoIds', `names uploads your partner does not have: ${unknown.join(', ')}`);
    }
  });
}

const EARTH_RADIUS_M = 6_371_000;
const rad = (deg: number) => (deg * Math.PI) / 180;

/** Great-circle distance in metres (haversine, mean Earth radius 6,371 km). */
export function haversineM(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const dLat = rad(b.lat - a.lat);
  const dLng = rad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** How far from the address a DELIVERED location may be: 300 m plus its accuracy, 500 m at most. */
export function allowedDistanceM(accuracyM: number): number {
  return Math.min(300 + accuracyM, 500);
}

const round1 = (m: number) => Math.round(m * 10) / 10;

/**
 * The proof row of an accepted event on its locked order (whose address point came with the lock), or
 * null when the event has no proof. A DELIVERED location outside the geofence of an address with
 * coordinates is refused (409 ERR_OUTSIDE_GEOFENCE with `details { distanceM, allowedM }`). No query.
 */
export function proofOfEvent(
  key: ResolvedKey,
  order: { id: string; addressPoint: { lat: number; lng: number } | null },
  body: ProofEventBody,
  now: Date,
): NewProof | null {
  const proof = body.proof;
  if (proof === undefined || !PROVABLE.has(body.type)) return null;
  const event = body.type as NewProof['event'];
  const location = proof.location;
  let distanceM: number | null = null;
  if (location && order.addressPoint) {
    const distance = haversineM(order.addressPoint, location);
    const allowedM = allowedDistanceM(location.accuracyM);
    if (event === 'DELIVERED' && distance > allowedM) {
      throw new AppError(
        'ERR_OUTSIDE_GEOFENCE',
        `The location is ${Math.round(distance)} m from the delivery address; at most ${allowedM} m is allowed`,
        { distanceM: round1(distance), allowedM },
      );
    }
    distanceM = round1(distance);
  }
  return {
    orderId: order.id,
    partnerId: key.partnerId,
    event,
    at: now,
    location: location ?? null,
    distanceM,
    photoIds: proof.photoIds ?? [],
    recipientName: proof.recipientName ?? null,
  };
}

export async function recordProofs(proofs: NewProof[], q: Queryable): Promise<void> {
  await insertProofs(proofs, q);
}
