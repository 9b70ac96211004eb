import { formatDateTime } from '../format';
import type { DeveloperKey } from '../types';
import { Badge } from './States';

/** Revoked for good: the server says the key no longer works (isActive false once revokedAt has passed). */
export const isRevoked = (k: DeveloperKey) => !k.isActive;

/** active / rotating until T / revoked, read from the server's isActive and revokedAt (not the browser clock). */
export function KeyStatus({ apiKey }: { apiKey: DeveloperKey }) {
  if (!apiKey.isActive) {
    return <Badge tone="muted">Revoked{apiKey.revokedAt ? ` ${formatDateTime(apiKey.revokedAt)}` : ''}</Badge>;
  }
  if (apiKey.revokedAt) return <Badge tone="warn">Rotating until {formatDateTime(apiKey.revokedAt)}</Badge>;
  return <Badge tone="ok">Active</Badge>;
}
