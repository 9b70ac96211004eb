/**
 * The live and sandbox base URLs of the partner API (the server's published addresses), each with the
 * keys it takes. `only` shows just one environment's.
 */
import { baseFor, useApiBases } from '../api-bases';
import { CodeBlock } from './CodeBlock';

export function ApiBaseUrls({ only }: { only?: 'LIVE' | 'SANDBOX' }) {
  const bases = useApiBases();
  const rows = (['LIVE', 'SANDBOX'] as const).filter((e) => !only || e === only);
  return (
    <dl className="facts base-urls" data-testid="api-base-urls">
      {rows.map((environment) => (
        <div key={environment}>
          <dt>{environment === 'LIVE' ? 'Live API' : 'Sandbox API'}</dt>
          <dd className="mono" data-testid={`base-url-${environment.toLowerCase()}`}>
            {bases ? baseFor(bases, environment) : '…'}
          </dd>
          <dd className="hint">
            for <code>{environment === 'LIVE' ? 'svc_live_…' : 'svc_sandbox_…'}</code> keys
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** A key's first call: its environment's base URL in a curl line (the key itself read from the shell). */
export function KeyFirstCall({ environment }: { environment: 'LIVE' | 'SANDBOX' }) {
  const bases = useApiBases();
  const base = bases ? baseFor(bases, environment) : '…';
  return (
    <>
      <p>
        This key works on the {environment === 'LIVE' ? 'live' : 'sandbox'} API at <code data-testid="key-base-url">{base}</code>.
        A first call:
      </p>
      <CodeBlock label="First request" code={`curl ${base}/v1/partner/me \\\n  -H "X-Api-Key: $PARTNER_API_KEY"`} />
    </>
  );
}
