import type { DeveloperKey } from '@partner-logistics/sdk/types';
import { formatShortDateTime } from '../format';
import { Badge } from './States';

/** Revoked for good: the server says the key no longer works (isActive false once revokedAt has passed). */
export const isRevoked = (k: DeveloperKey) => !k.isActive;

/**
 * Active / rotated (still working until T) / revoked, read from the server's isActive and revokedAt
 * (not the browser clock). One short line: a badge, and for a rotated key when it stops (`brief`: the
 * badge alone, where the key's name already says when: the key list).
 */
export function KeyStatus({ apiKey, brief = false }: { apiKey: DeveloperKey; brief?: boolean }) {
  if (!apiKey.isActive) {
    return (
      <span className="key-status">
        <Badge tone="muted">Revoked</Badge>
        {apiKey.revokedAt && !brief && <span className="hint"> {formatShortDateTime(apiKey.revokedAt)}</span>}
      </span>
    );
  }
  if (apiKey.revokedAt) {
    return (
      <span className="key-status" data-rotated="true">
        <Badge tone="warn">Rotated</Badge>
        {!brief && <span className="hint"> expires {formatShortDateTime(apiKey.revokedAt)}</span>}
      </span>
    );
  }
  return <Badge tone="ok">Active</Badge>;
}
