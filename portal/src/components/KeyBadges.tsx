/** How a key's environment and scopes read wherever a key is shown. */
import type { ApiKeyEnvironment, DeveloperKey } from '@partner-logistics/sdk/types';
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
