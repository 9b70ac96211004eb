/**
 * Key format (docs/decisions-log.md, 'API keys'): `svc_live_` or `svc_sandbox_` + 32 base62 characters from a
 * CSPRNG. `prefix` is the environment prefix plus the first 6 random characters; only the prefix and
 * the SHA-256 of the whole key are stored.
 */
import { hash, randomInt } from 'node:crypto';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
export const KEY_PATTERN = /^svc_(live|sandbox)_[0-9A-Za-z]{32}$/;

export function environmentPrefix(environment: ApiKeyEnvironment): string {
  return environment === 'LIVE' ? 'svc_live_' : 'svc_sandbox_';
}

export interface GeneratedKey {
  key: string;
  prefix: string;
  hash: string;
}

export function generateKey(environment: ApiKeyEnvironment): GeneratedKey {
  let random = '';
  // randomInt is uniform (rejection sampling), so every character carries log2(62) bits.
  for (let i = 0; i < RANDOM_LENGTH; i++) random += BASE62[randomInt(62)];
  const key = environmentPrefix(environment) + random;
  return { key, prefix: environmentPrefix(environment) + random.slice(0, 6), hash: hashKey(key) };
}

/** SHA-256 of the key, hex (the one-shot `crypto.hash`: on every partner request, so no Hash object). */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}
