/**
 * The checklist items only the request log can prove (decisions §13, §14): listed orders with
 * updatedSince, and repeated an event with the same Idempotency-Key.
 */
import type { Queryable } from '../../db/db.js';
import type { LineageMember } from './checklist.repo.js';

export interface RequestEvidence {
  listedUpdatedSince: Date | null;
  idempotentRepeat: Date | null;
}

/** When each request item was first met, per acts-for key of `members`. */
export async function requestEvidence(members: LineageMember[], _q: Queryable): Promise<Map<string, RequestEvidence>> {
  void members;
  return new Map();
}
