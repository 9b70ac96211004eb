/**
 * API keys: the list (prefix only), create (the full key shown once), rotate and revoke.
 */
import { type FormEvent, useId, useState } from 'react';
import { api } from '../api';
import { ApiBaseUrls, KeyFirstCall } from '../components/ApiBaseUrls';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Dialog } from '../components/Dialog';
import { ErrorNotice, fieldMessages } from '../components/ErrorNotice';
import { isRevoked, KeyStatus } from '../components/KeyStatus';
import { usePageTitle } from '../components/PageTitle';
import { CopiedButton, SecretReveal, secretBlockedNote } from '../components/SecretReveal';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { formatDateTime, formatNumber, formatShortDateTime } from '../format';
import { useAction, useResource } from '../hooks';
import { Link, useSearchParam } from '../router';
import {
  type ApiKeyEnvironment,
  type ApiKeyScope,
  type DeveloperKey,
  type DeveloperKeyCreated,
  type DeveloperKeyRotated,
  SCOPES,
} from '../types';

/** Active keys per partner (spec 8); only keys whose revokedAt is null count. */
const ACTIVE_KEY_LIMIT = 10;

export function Keys() {
  usePageTitle('API keys');
  const keys = useResource(api.listKeys, []);
  // A link may ask for the create dialog ready for a live key (the sandbox checklist's next step).
  const [creating, setCreating] = useState<boolean | 'LIVE'>(useSearchParam('create') === 'LIVE' ? 'LIVE' : false);
  const [rotating, setRotating] = useState<DeveloperKey | null>(null);
  const [revoking, setRevoking] = useState<DeveloperKey | null>(null);

  const all = keys.data ?? [];
  const current = all.filter((k) => !isRevoked(k));
  const revoked = all.filter(isRevoked);
  const activeCount = all.filter((k) => k.revokedAt === null).length;

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
          disabled={activeCount >= ACTIVE_KEY_LIMIT}
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
            {activeCount} of {ACTIVE_KEY_LIMIT} active keys used.
            {activeCount >= ACTIVE_KEY_LIMIT && ' Revoke a key you no longer use to create another.'}
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
        open={creating !== false}
        initialEnvironment={creating === 'LIVE' ? 'LIVE' : 'SANDBOX'}
        onClose={() => setCreating(false)}
        onCreated={() => void keys.reload()}
      />
      <RotateKeyDialog apiKey={rotating} onClose={() => setRotating(null)} onRotated={() => void keys.reload()} />
      <RevokeKeyDialog apiKey={revoking} onClose={() => setRevoking(null)} onRevoked={() => void keys.reload()} />
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

function CreateKeyDialog({
  open,
  initialEnvironment,
  onClose,
  onCreated,
}: {
  open: boolean;
  initialEnvironment: ApiKeyEnvironment;
  onClose: () => void;
  onCreated: () => void;
}) {
  const [name, setName] = useState('');
  const [environment, setEnvironment] = useState<ApiKeyEnvironment>(initialEnvironment);
  const [scopes, setScopes] = useState<ApiKeyScope[]>(['orders:read']);
  const [created, setCreated] = useState<DeveloperKeyCreated | null>(null);
  const nameId = useId();
  const create = useAction(async () => {
    const key = await api.createKey({ name, environment, scopes });
    setCreated(key);
    onCreated();
  });

  const close = () => {
    onClose();
    // Forget the one-time key as soon as the dialog closes.
    setCreated(null);
    setName('');
    setScopes(['orders:read']);
    setEnvironment('SANDBOX');
    setChecked({});
    create.setError(null);
  };

  // Checked here, in plain words, before anything is sent.
  const [checked, setChecked] = useState<{ name?: string; scopes?: string }>({});
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems = {
      name: name.trim().length < 2 ? 'Give the key a name of at least 2 characters.' : undefined,
      scopes: scopes.length === 0 ? 'Choose at least one scope.' : undefined,
    };
    setChecked(problems);
    if (!problems.name && !problems.scopes) void create.run();
  };

  const toggleScope = (scope: ApiKeyScope, on: boolean) =>
    setScopes((s) =>
      on ? SCOPES.map((x) => x.value).filter((v) => v === scope || s.includes(v)) : s.filter((v) => v !== scope),
    );

  const nameErrors = checked.name ? [checked.name] : fieldMessages(create.error, 'name').map((m) => `Name ${m}`);
  const scopeErrors = checked.scopes ? [checked.scopes] : fieldMessages(create.error, 'scopes').map((m) => `Scopes ${m}`);

  return (
    <Dialog
      open={open}
      title={created ? 'Your new API key' : 'Create an API key'}
      onClose={close}
      dismissable={!create.busy && !created}
      blockedNote={secretBlockedNote('key')}
      focusKey={created ? 'created' : 'form'}
    >
      {created ? (
        <>
          <SecretReveal label="API key" noun="key" value={created.key} testId="new-key" />
          <p>
            <strong>{created.name}</strong> · <EnvironmentBadge environment={created.environment} /> · {created.scopes.join(', ')}
          </p>
          <KeyFirstCall environment={created.environment} />
          <CopiedButton onClick={close} />
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <ErrorNotice error={create.error} inlineFields={['name', 'scopes']} />
          <label htmlFor={nameId}>Name</label>
          <input
            id={nameId}
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={60}
            aria-invalid={nameErrors.length > 0}
            aria-describedby={`${nameId}-hint`}
            data-autofocus
          />
          <p id={`${nameId}-hint`} className={nameErrors.length ? 'field-error' : 'hint'}>
            {nameErrors.length ? nameErrors.join(' ') : '2 to 60 characters, e.g. “Dispatch system”.'}
          </p>

          <fieldset>
            <legend>Environment</legend>
            <EnvironmentOption value="SANDBOX" current={environment} onChange={setEnvironment}>
              Sandbox: test orders only; works on the sandbox API.
            </EnvironmentOption>
            <EnvironmentOption value="LIVE" current={environment} onChange={setEnvironment}>
              Live: real orders and customers; works on the live API.
            </EnvironmentOption>
          </fieldset>

          <fieldset aria-describedby={scopeErrors.length ? `${nameId}-scopes` : undefined}>
            <legend>Scopes</legend>
            {SCOPES.map((s) => (
              <label key={s.value} className="option">
                <input
                  type="checkbox"
                  checked={scopes.includes(s.value)}
                  onChange={(e) => toggleScope(s.value, e.target.checked)}
                />
                <span>
                  <code>{s.value}</code>
                  <span className="option-meaning">{s.meaning}</span>
                </span>
              </label>
            ))}
            {scopeErrors.length > 0 && (
              <p id={`${nameId}-scopes`} className="field-error">
                {scopeErrors.join(' ')}
              </p>
            )}
          </fieldset>

          <div className="dialog-actions">
            <button type="button" onClick={close} disabled={create.busy}>
              Cancel
            </button>
            <button type="submit" className="primary" disabled={create.busy}>
              {create.busy ? 'Creating…' : 'Create key'}
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

function EnvironmentOption({
  value,
  current,
  onChange,
  children,
}: {
  value: ApiKeyEnvironment;
  current: ApiKeyEnvironment;
  onChange: (v: ApiKeyEnvironment) => void;
  children: string;
}) {
  return (
    <label className="option">
      <input type="radio" name="environment" value={value} checked={current === value} onChange={() => onChange(value)} />
      <span>{children}</span>
    </label>
  );
}

function RotateKeyDialog({
  apiKey,
  onClose,
  onRotated,
}: {
  apiKey: DeveloperKey | null;
  onClose: () => void;
  onRotated: () => void;
}) {
  const [rotated, setRotated] = useState<DeveloperKeyRotated | null>(null);
  const rotate = useAction(async (id: string) => {
    setRotated(await api.rotateKey(id));
    onRotated();
  });
  const close = () => {
    onClose();
    setRotated(null);
    rotate.setError(null);
  };

  return (
    <Dialog
      open={apiKey !== null}
      title={rotated ? 'Your rotated API key' : `Rotate “${apiKey?.name ?? ''}”?`}
      onClose={close}
      dismissable={!rotate.busy && !rotated}
      blockedNote={secretBlockedNote('key')}
      focusKey={rotated ? 'rotated' : 'confirm'}
    >
      {rotated ? (
        <>
          <SecretReveal label="API key" noun="key" value={rotated.key} testId="rotated-key" />
          <p data-testid="grace-end">
            The old key <code>{apiKey?.prefix}…</code> keeps working until{' '}
            <strong>{formatDateTime(rotated.previousKeyRevokedAt)}</strong>. Switch your systems to the new key before then.
          </p>
          <p className="hint">
            Moved to the new key: {rotated.movedOrders} {rotated.movedOrders === 1 ? 'order' : 'orders'} and{' '}
            {rotated.movedWebhooks} {rotated.movedWebhooks === 1 ? 'webhook' : 'webhooks'}.
          </p>
          <CopiedButton onClick={close} />
        </>
      ) : (
        <>
          <p>
            A new key with the same name, environment and scopes is created and shown once. The current key keeps working for 24
            hours, then stops. Its orders and webhooks move to the new key.
          </p>
          <ErrorNotice error={rotate.error} />
          <div className="dialog-actions">
            <button type="button" onClick={close} disabled={rotate.busy} data-autofocus>
              Cancel
            </button>
            <button type="button" className="primary" disabled={rotate.busy} onClick={() => apiKey && void rotate.run(apiKey.id)}>
              {rotate.busy ? 'Rotating…' : 'Rotate key'}
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}

function RevokeKeyDialog({
  apiKey,
  onClose,
  onRevoked,
}: {
  apiKey: DeveloperKey | null;
  onClose: () => void;
  onRevoked: () => void;
}) {
  const revoke = useAction(async (id: string) => {
    await api.revokeKey(id);
    onRevoked();
    onClose();
  });
  const close = () => {
    onClose();
    revoke.setError(null);
  };
  return (
    <ConfirmDialog
      open={apiKey !== null}
      title={`Revoke “${apiKey?.name ?? ''}”?`}
      confirmLabel="Revoke key"
      busyLabel="Revoking…"
      busy={revoke.busy}
      error={revoke.error}
      onConfirm={() => apiKey && void revoke.run(apiKey.id)}
      onClose={close}
    >
      <p>
        Requests with <code>{apiKey?.prefix}…</code> fail with <code>ERR_API_KEY_REVOKED</code> from now on. This cannot be
        undone.
      </p>
    </ConfirmDialog>
  );
}
