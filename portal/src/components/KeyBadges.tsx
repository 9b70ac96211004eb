/** How a key's environment and scopes read wherever a key is shown. */
import type { ApiKeyEnvironment, DeveloperKey } from '@partner-logistics/sdk/types';
import { formatShortDateTime } from '../format';
import { Badge } from './States';

export function EnvironmentBadge({ environment }: { environment: ApiKeyEnvironment }) {
  return environment === 'LIVE' ? <Badge tone="live">Live</Badge> : <Badge tone="sandbox">Sandbox</Badge>;
}

/** A key's scopes as chips, and the operator's receivesAllOrders flag when it is set. */
export function KeyScopes({ apiKey }: { apiKey: Pick<DeveloperKey, 'scopes' | 'receivesAllOrders'> }) {
  return (
    <>
      <ul className="chips">
        {apiKey.scopes.map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ul>
      {apiKey.receivesAllOrders && <Badge tone="muted">receives all orders</Badge>}
    </>
  );
}

/** A key as the request log names it: name and prefix, and when a rotated key stops working; or its environment when the key is gone. */
export function KeyName({ apiKey, environment }: { apiKey: DeveloperKey | undefined; environment: string }) {
  if (!apiKey) return <span className="muted">{environment === 'SANDBOX' ? 'Sandbox key' : 'Live key'}</span>;
  return (
    <>
      {apiKey.name} <code className="key-prefix">{apiKey.prefix}…</code>
      {apiKey.isActive && apiKey.revokedAt && (
        <span className="key-rotated"> (rotated, expires {formatShortDateTime(apiKey.revokedAt)})</span>
      )}
    </>
  );
}
