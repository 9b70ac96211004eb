/**
 * Keys and their rotations, told apart and grouped from what the key list says. A rotation creates
 * the successor (same name and environment) at the instant T and sets the old key's `revokedAt` to
 * T + 24 h, so a key's successor is the key of the same name and environment created exactly 24 hours
 * before the old key stops. A chain of rotations is one integration: its newest key names it.
 */

import type { DeveloperKey } from '@partner-logistics/sdk/types';
import { formatShortDateTime } from './format';

/** The grace a rotation gives the old key (the API's rule). */
export const ROTATION_GRACE_MS = 24 * 3_600_000;

export function successorOf(key: DeveloperKey, keys: readonly DeveloperKey[]): DeveloperKey | null {
  if (!key.revokedAt) return null;
  const rotatedAt = Date.parse(key.revokedAt) - ROTATION_GRACE_MS;
  return (
    keys.find(
      (k) => k.id !== key.id && k.name === key.name && k.environment === key.environment && Date.parse(k.createdAt) === rotatedAt,
    ) ?? null
  );
}

/** True for a key rotated out (it has a successor), whether still in its grace period or past it. */
export function isRotatedOut(key: DeveloperKey, keys: readonly DeveloperKey[]): boolean {
  return successorOf(key, keys) !== null;
}

/** The newest key of the rotation chain `key` belongs to (itself when it was never rotated). */
export function integrationOf(key: DeveloperKey, keys: readonly DeveloperKey[]): DeveloperKey {
  let at = key;
  for (let i = 0; i < keys.length; i++) {
    const next = successorOf(at, keys);
    if (!next) break;
    at = next;
  }
  return at;
}

/**
 * How a key is named wherever keys are listed or picked: its name and prefix, and for a key rotated
 * out "(rotated, expires …)" while it still works, so two keys of one name are never confused.
 */
export function keyLabel(key: DeveloperKey): string {
  if (key.isActive && key.revokedAt) return `${key.name} (rotated, expires ${formatShortDateTime(key.revokedAt)})`;
  if (!key.isActive) return `${key.name} (${key.prefix}…, revoked)`;
  return `${key.name} (${key.prefix}…)`;
}
