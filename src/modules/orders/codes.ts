/**
 * Readable, unguessable codes for orders and batches: a prefix + 8 Crockford base32 characters
 * (no I, L, O, U, so a code read aloud or typed from a label is unambiguous) from a CSPRNG.
 * 32^8 ≈ 1.1e12 codes: a collision is rare, and the insert draws again when it happens.
 */
import { randomInt } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function randomCode(prefix: string): string {
  let code = prefix;
  for (let i = 0; i < 8; i++) code += CROCKFORD[randomInt(32)];
  return code;
}

export const newOrderCode = (): string => randomCode('ORD-');
export const newBatchCode = (): string => randomCode('BAT-');

/** How many codes an insert draws before giving up (a second collision in a row is astronomically rare). */
export const CODE_ATTEMPTS = 5;
