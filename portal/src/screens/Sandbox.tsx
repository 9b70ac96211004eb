/**
 * The sandbox simulator (docs/decisions-log.md, 'Sandbox simulator and go-live checklist'): for one sandbox key, play the marketplace (create test orders,
 * move them as the marketplace would, run van batches) and follow the go-live checklist of what the
 * integration has proven. The moves offered for each order and batch are the ones the API says the
 * state machine allows from its status; nothing here decides them. The page follows the realtime
 * channel: orders, deliveries and logged requests reload what they change.
 */

import type { DeveloperKey } from '@partner-logistics/sdk/types';
import { useEffect, useId, useState } from 'react';
import { developer } from '../client';
import { ApiBaseUrls } from '../components/ApiBaseUrls';
import { ErrorNotice } from '../components/ErrorNotice';
import { GoLiveChecklist } from '../components/GoLiveChecklist';
import { usePageTitle } from '../components/PageTitle';
import { Empty, LoadError, Loading } from '../components/States';
import { useCoalesced } from '../hooks';
import { keyLabel } from '../key-lineage';
import { invalidate, queryKeys, useApiQuery, useKeys } from '../query';
import { onReconnect, subscribe } from '../realtime';
import { Link, navigate, useSearchParam } from '../router';
import '../components/sandbox.css';
import { CreateOrdersForm } from '../components/SandboxCreateOrders';
import { Orders } from '../components/SandboxOrders';

/**
 * Why a sandbox key cannot run the simulator, or null when it can: the simulator acts for the key's
 * integration, which must be able to report events (logistics:write) on the sandbox API.
 */
function whyNot(key: DeveloperKey): string | null {
  if (!key.isActive) return 'revoked';
  if (!key.scopes.includes('logistics:write')) return 'no logistics:write scope';
  return null;
}

/** The key the page opens on: the one asked for if it can run the simulator, else the newest unrotated one that can. */
function pickKey(keys: DeveloperKey[], wanted: string | null): DeveloperKey | undefined {
  const able = keys.filter((k) => whyNot(k) === null);
  return able.find((k) => k.id === wanted) ?? able.find((k) => k.revokedAt === null) ?? able[0];
}

export function Sandbox() {
  usePageTitle('Sandbox');
  const keys = useKeys();
  const wanted = useSearchParam('key');
  const selectId = useId();
  const sandboxKeys = (keys.data ?? []).filter((k) => k.environment === 'SANDBOX' && k.isActive);
  const current = pickKey(sandboxKeys, wanted);
  const unable = sandboxKeys.filter((k) => whyNot(k) !== null);
  const refused = wanted ? sandboxKeys.find((k) => k.id === wanted && whyNot(k) !== null) : undefined;

  return (
    <>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>Sandbox</h1>
          <p className="lead">
            Play the marketplace for one of your sandbox keys: create test orders, move them as the marketplace would (accept,
            cancel, return after a failure, van batches) and watch your integration receive the webhooks. The go-live checklist
            shows what your integration has proven so far.
          </p>
          <ApiBaseUrls only="SANDBOX" />
        </div>
      </div>

      {keys.error && !keys.data && <LoadError error={keys.error} onRetry={() => void keys.reload()} />}
      {keys.loading && !keys.data && <Loading label="Loading keys…" />}
      {keys.data && !current && (
        <Empty>
          <p data-testid="no-simulator-key">
            The simulator needs an active sandbox key with the <code>logistics:write</code> scope, so that your integration can
            report pickups and deliveries.{' '}
            {unable.length > 0 &&
              `${unable.length === 1 ? 'Your sandbox key' : 'Your sandbox keys'} ${unable.map((k) => `“${keyLabel(k)}”`).join(', ')} ${unable.length === 1 ? 'lacks' : 'lack'} that scope. `}
            <Link to="/keys">Create a sandbox key</Link> with it.
          </p>
        </Empty>
      )}
      {current && (
        <>
          <div className="field-inline sandbox-key-picker">
            <label htmlFor={selectId}>Sandbox key</label>
            <select
              id={selectId}
              value={current.id}
              aria-describedby={unable.length > 0 ? `${selectId}-why` : undefined}
              onChange={(e) => navigate(`/sandbox?key=${encodeURIComponent(e.target.value)}`, { replace: true })}
            >
              {sandboxKeys.map((k) => (
                <option key={k.id} value={k.id} disabled={whyNot(k) !== null}>
                  {keyLabel(k)}
                  {whyNot(k) ? ` — cannot run the simulator: ${whyNot(k)}` : ''}
                </option>
              ))}
            </select>
          </div>
          {unable.length > 0 && (
            <p className="hint" id={`${selectId}-why`} data-testid="unusable-keys">
              {refused ? `“${keyLabel(refused)}” cannot run the simulator. ` : ''}
              Only keys with the <code>logistics:write</code> scope can run it: your integration must be able to report events.
              Not offered: {unable.map((k) => `“${keyLabel(k)}” (${whyNot(k)})`).join(', ')}.
            </p>
          )}
          <KeySandbox key={current.id} apiKey={current} />
        </>
      )}
    </>
  );
}

function KeySandbox({ apiKey }: { apiKey: DeveloperKey }) {
  const keyId = apiKey.id;
  const path = { params: { path: { id: keyId } } };
  const overview = useApiQuery(queryKeys.sandbox(keyId), () => developer.GET('/v1/developer/keys/{id}/sandbox', path), {
    live: true,
  });
  const checklist = useApiQuery(queryKeys.checklist(keyId), () => developer.keys.checklist(keyId), { live: true });
  const reloadOverview = useCoalesced(() => void invalidate(queryKeys.sandbox(keyId)), 250);
  const reloadChecklist = useCoalesced(() => void invalidate(queryKeys.checklist(keyId)), 500);

  useEffect(() => {
    const offs = [
      subscribe('order.updated', () => {
        reloadOverview();
        reloadChecklist();
      }),
      subscribe('delivery.updated', reloadChecklist),
      subscribe('request.logged', reloadChecklist),
      onReconnect(() => {
        reloadOverview();
        reloadChecklist();
      }),
    ];
    return () => {
      for (const off of offs) off();
    };
  }, [reloadOverview, reloadChecklist]);

  // Each successful action counts: an error shown for an earlier action is cleared by a later success.
  const [succeeded, setSucceeded] = useState(0);
  const after = () => {
    setSucceeded((n) => n + 1);
    reloadOverview();
    reloadChecklist();
  };

  return (
    <>
      <section className="section" aria-labelledby="checklist-heading" data-testid="checklist">
        <div className="section-head">
          <h2 id="checklist-heading">Go-live checklist</h2>
          <button type="button" onClick={() => void checklist.reload()} disabled={checklist.loading}>
            Refresh
          </button>
        </div>
        {checklist.error && <ErrorNotice error={checklist.error} title="Could not load the checklist." />}
        {!checklist.data && checklist.loading && <Loading label="Loading the checklist…" />}
        {checklist.data && <GoLiveChecklist checklist={checklist.data} />}
      </section>

      <section className="section" aria-labelledby="create-heading">
        <h2 id="create-heading">Create test orders</h2>
        <CreateOrdersForm keyId={keyId} onCreated={after} succeeded={succeeded} />
      </section>

      {overview.error && !overview.data && <LoadError error={overview.error} onRetry={() => void overview.reload()} />}
      {!overview.data && overview.loading && <Loading label="Loading test orders…" />}
      {overview.data && (
        <Orders
          keyId={keyId}
          orders={overview.data.orders}
          batches={overview.data.batches}
          onChanged={after}
          succeeded={succeeded}
        />
      )}
    </>
  );
}
