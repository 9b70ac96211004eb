/**
 * The API keys page's dialogs: create (the key shown once, with its base URL), rotate (the new key
 * shown once, with the old key's grace end) and revoke. A one-time key's dialog closes only on
 * "I have copied it" (docs/portal.md, One-time secrets).
 */

import type {
  ApiKeyEnvironment,
  ApiKeyScope,
  DeveloperKey,
  DeveloperKeyCreated,
  DeveloperKeyRotated,
} from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { developer } from '../client';
import { formatDateTime } from '../format';
import { SCOPES } from '../types';
import { KeyFirstCall } from './ApiBaseUrls';
import { ConfirmDialog } from './ConfirmDialog';
import { Dialog } from './Dialog';
import { ErrorNotice, fieldMessages } from './ErrorNotice';
import { EnvironmentBadge } from './KeyBadges';
import { CopiedButton, SecretReveal, secretBlockedNote } from './SecretReveal';

export function CreateKeyDialog({
  open,
  initialEnvironment,
  initialScopes = ['orders:read'],
  onClose,
  onCreated,
}: {
  open: boolean;
  initialEnvironment: ApiKeyEnvironment;
  /** The scopes ticked at first (a sandbox key's, when its checklist asks for a live key with the same scopes). */
  initialScopes?: ApiKeyScope[];
  onClose: () => void;
  onCreated: () => void;
}) {
  const [name, setName] = useState('');
  const [environment, setEnvironment] = useState<ApiKeyEnvironment>(initialEnvironment);
  const [scopes, setScopes] = useState<ApiKeyScope[]>(initialScopes);
  const [created, setCreated] = useState<DeveloperKeyCreated | null>(null);
  const nameId = useId();
  const create = useMutation({
    mutationFn: () => developer.keys.create({ name, environment, scopes }),
    onSuccess: (key) => {
      setCreated(key);
      onCreated();
    },
  });

  const close = () => {
    onClose();
    // Forget the one-time key as soon as the dialog closes.
    setCreated(null);
    setName('');
    setScopes(initialScopes);
    setEnvironment('SANDBOX');
    setChecked({});
    create.reset();
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
    if (!problems.name && !problems.scopes) create.mutate();
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
      dismissable={!create.isPending && !created}
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
            <button type="button" onClick={close} disabled={create.isPending}>
              Cancel
            </button>
            <button type="submit" className="primary" disabled={create.isPending}>
              {create.isPending ? 'Creating…' : 'Create key'}
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

export function RotateKeyDialog({
  apiKey,
  onClose,
  onRotated,
}: {
  apiKey: DeveloperKey | null;
  onClose: () => void;
  onRotated: () => void;
}) {
  const [rotated, setRotated] = useState<DeveloperKeyRotated | null>(null);
  const rotate = useMutation({
    mutationFn: (id: string) => developer.keys.rotate(id),
    onSuccess: (key) => {
      setRotated(key);
      onRotated();
    },
  });
  const close = () => {
    onClose();
    setRotated(null);
    rotate.reset();
  };

  return (
    <Dialog
      open={apiKey !== null}
      title={rotated ? 'Your rotated API key' : `Rotate “${apiKey?.name ?? ''}”?`}
      onClose={close}
      dismissable={!rotate.isPending && !rotated}
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
            <button type="button" onClick={close} disabled={rotate.isPending} data-autofocus>
              Cancel
            </button>
            <button
              type="button"
              className="primary"
              disabled={rotate.isPending}
              onClick={() => apiKey && rotate.mutate(apiKey.id)}
            >
              {rotate.isPending ? 'Rotating…' : 'Rotate key'}
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}

export function RevokeKeyDialog({
  apiKey,
  onClose,
  onRevoked,
}: {
  apiKey: DeveloperKey | null;
  onClose: () => void;
  onRevoked: () => void;
}) {
  const revoke = useMutation({
    mutationFn: (id: string) => developer.keys.revoke(id),
    onSuccess: () => {
      onRevoked();
      onClose();
    },
  });
  const close = () => {
    onClose();
    revoke.reset();
  };
  return (
    <ConfirmDialog
      open={apiKey !== null}
      title={`Revoke “${apiKey?.name ?? ''}”?`}
      confirmLabel="Revoke key"
      busyLabel="Revoking…"
      busy={revoke.isPending}
      error={revoke.error}
      onConfirm={() => apiKey && revoke.mutate(apiKey.id)}
      onClose={close}
    >
      <p>
        Requests with <code>{apiKey?.prefix}…</code> fail with <code>ERR_API_KEY_REVOKED</code> from now on. This cannot be
        undone.
      </p>
    </ConfirmDialog>
  );
}
