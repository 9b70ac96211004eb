/**
 * API keys: the list (prefix only), create (the full key shown once), rotate and revoke.
 */

import type { DeveloperKey } from '@partner-logistics/sdk/types';
import { useState } from 'react';
import { ApiBaseUrls } from '../components/ApiBaseUrls';
import { ErrorNotice } from '../components/ErrorNotice';
import { EnvironmentBadge, KeyScopes } from '../components/KeyBadges';
import { CreateKeyDialog, RevokeKeyDialog, RotateKeyDialog } from '../components/KeyDialogs';
import { isRevoked, KeyStatus } from '../components/KeyStatus';
import { usePageTitle } from '../components/PageTitle';
import { Empty, LoadError, Loading } from '../components/States';
import { formatDateTime, formatNumber, formatShortDateTime } from '../format';
import { invalidateKeys, useKeys, useLimits } from '../query';
import { Link, useSearchParam } from '../router';

export function Keys() {
  usePageTitle('API keys');
  const keys = useKeys();
  // A link may ask for the create dialog ready for a live key (the sandbox checklist's next step).
  const [creating, setCreating] = useState<boolean | 'LIVE'>(useSearchParam('create') === 'LIVE' ? 'LIVE' : false);
  // …with the scopes of the sandbox key it comes from (`from`), once the key list is in.
  const fromId = useSearchParam('from');
  const template = fromId ? keys.data?.find((k) => k.id === fromId) : undefined;
  const [rotating, setRotating] = useState<DeveloperKey | null>(null);
  const [revoking, setRevoking] = useState<DeveloperKey | null>(null);

  const all = keys.data ?? [];
  const current = all.filter((k) => !isRevoked(k));
  const revoked = all.filter(isRevoked);
  // Keys with no revokedAt count against the API's limit (a key rotated out does not).
  const activeCount = all.filter((k) => k.revokedAt === null).length;
  const limit = useLimits().data?.activeKeysPerPartner;
  const full = limit !== undefined && activeCount >= limit;

  return (
    <>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>API keys</h1>
          <p className="lead">
            Keys authenticate your systems on the partner API (header <code>X-Api-Key</code>). A live key works only on the live
            API, a sandbox key only on the sandbox API.
          </p>
          <ApiBaseUrls />
        </div>
        <button
          type="button"
          className="primary"
          onClick={() => setCreating(true)}
          disabled={full}
          aria-describedby="active-key-count"
        >
          Create key
        </button>
      </div>

      {keys.error && !keys.data && <LoadError error={keys.error} onRetry={() => void keys.reload()} />}
      {keys.error && keys.data && <ErrorNotice error={keys.error} title="Could not refresh the list." />}
      {keys.loading && !keys.data && <Loading label="Loading keys…" />}
      {keys.data && (
        <>
          <p className="hint" data-testid="active-key-count" id="active-key-count">
            {limit !== undefined && `${activeCount} of ${limit} active keys used.`}
            {full && ' Revoke a key you no longer use to create another.'}
          </p>
          {current.length === 0 ? (
            <Empty>
              <p>You have no active keys yet.</p>
              <button type="button" className="primary" onClick={() => setCreating(true)}>
                Create your first key
              </button>
            </Empty>
          ) : (
            <KeyTable keys={current} onRotate={setRotating} onRevoke={setRevoking} />
          )}
          {revoked.length > 0 && (
            <details className="revoked">
              <summary>Revoked keys ({revoked.length})</summary>
              <KeyTable keys={revoked} onRotate={setRotating} onRevoke={setRevoking} />
            </details>
          )}
        </>
      )}

      <CreateKeyDialog
        key={template?.id ?? 'blank'}
        open={creating !== false}
        initialEnvironment={creating === 'LIVE' ? 'LIVE' : 'SANDBOX'}
        initialScopes={template?.scopes}
        onClose={() => setCreating(false)}
        onCreated={() => void invalidateKeys()}
      />
      <RotateKeyDialog apiKey={rotating} onClose={() => setRotating(null)} onRotated={() => void invalidateKeys()} />
      <RevokeKeyDialog apiKey={revoking} onClose={() => setRevoking(null)} onRevoked={() => void invalidateKeys()} />
    </>
  );
}

function KeyTable({
  keys,
  onRotate,
  onRevoke,
}: {
  keys: DeveloperKey[];
  onRotate: (k: DeveloperKey) => void;
  onRevoke: (k: DeveloperKey) => void;
}) {
  return (
    <div className="table-wrap">
      <table className="table cards-on-phone">
        <thead>
          <tr>
            <th scope="col">Name and prefix</th>
            <th scope="col">Environment</th>
            <th scope="col">Scopes</th>
            <th scope="col">Rate limit</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id} data-key-id={k.id} data-key-name={k.name}>
              <th scope="row" data-label="Name">
                <Link to={`/keys/${k.id}`}>{k.name}</Link>
                {k.isActive && k.revokedAt && (
                  <span className="key-rotated" data-testid="key-rotated">
                    {' '}
                    (rotated, expires {formatShortDateTime(k.revokedAt)})
                  </span>
                )}
                <code className="key-prefix">{k.prefix}…</code>
              </th>
              <td data-label="Environment">
                <EnvironmentBadge environment={k.environment} />
              </td>
              <td data-label="Scopes">
                <KeyScopes apiKey={k} />
              </td>
              <td data-label="Rate limit">{formatNumber(k.rateLimit)}/min</td>
              <td data-label="Last used">{k.lastUsedAt ? formatDateTime(k.lastUsedAt) : 'Never'}</td>
              <td data-label="Status" data-testid="key-status" className="status-cell">
                <KeyStatus apiKey={k} brief />
              </td>
              <td className="actions-cell">
                <div className="actions">
                  <Link to={`/keys/${k.id}`} className="button">
                    Usage<span className="visually-hidden"> of {k.name}</span>
                  </Link>
                  {k.revokedAt === null && (
                    <button type="button" onClick={() => onRotate(k)}>
                      Rotate<span className="visually-hidden"> {k.name}</span>
                    </button>
                  )}
                  {!isRevoked(k) && (
                    <button type="button" className="danger" onClick={() => onRevoke(k)}>
                      Revoke<span className="visually-hidden"> {k.name}</span>
                    </button>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
