/**
 * Webhooks, grouped by the key they belong to: create (the signing secret shown once), edit URL and
 * events, enable / disable, delete, send a test event of any kind, rotate the signing secret, recover
 * failed deliveries, and each endpoint's health. Webhooks follow the realtime channel
 * ('webhook.updated': streak, isActive, rotation) without reloading.
 */

import type { DeveloperKey, DeveloperWebhook } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { developer } from '../client';
import { ErrorNotice } from '../components/ErrorNotice';
import { EnvironmentBadge } from '../components/KeyBadges';
import { isRevoked } from '../components/KeyStatus';
import { usePageTitle } from '../components/PageTitle';
import { RecoverDialog } from '../components/RecoverDialog';
import { RotateSecretDialog } from '../components/RotateSecretDialog';
import { SecretFormNotice } from '../components/SecretFormNotice';
import { Empty, LoadError, Loading } from '../components/States';
import { TestEventPicker } from '../components/TestEventPicker';
import { CreateWebhookDialog, DeleteWebhookDialog, EditWebhookDialog } from '../components/WebhookDialogs';
import { WebhookHealthCard } from '../components/WebhookHealthCard';
import { WebhookStatus } from '../components/WebhookStatus';
import { formatDateTime, formatShortDateTime } from '../format';
import { invalidate, queryKeys, replaceWebhook, useKeysAndWebhooks, useLimits } from '../query';
import { Link } from '../router';

export function Webhooks() {
  usePageTitle('Webhooks');
  const data = useKeysAndWebhooks();
  const limit = useLimits().data?.webhooksPerKey;
  const [creatingFor, setCreatingFor] = useState<DeveloperKey | null>(null);
  const [editing, setEditing] = useState<DeveloperWebhook | null>(null);
  const [deleting, setDeleting] = useState<DeveloperWebhook | null>(null);
  const [rotating, setRotating] = useState<DeveloperWebhook | null>(null);
  const [recovering, setRecovering] = useState<DeveloperWebhook | null>(null);

  const reloadWebhooks = () => void invalidate(queryKeys.webhooks);

  const groups = (data.data?.keys ?? [])
    .map((key) => ({ key, webhooks: (data.data?.webhooks ?? []).filter((w) => w.apiKeyId === key.id) }))
    // Keys on their way out (rotating or revoked) are listed only while they still hold webhooks.
    .filter((g) => g.key.revokedAt === null || g.webhooks.length > 0);

  return (
    <>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>Webhooks</h1>
          <p className="lead">
            We POST signed events to your endpoints. Each webhook belongs to a key that has the <code>webhooks:manage</code> scope
            and receives the events of that key’s orders. <Link to="/docs">How to verify signatures</Link>.
          </p>
        </div>
      </div>

      {data.error && !data.data && <LoadError error={data.error} onRetry={() => void data.reload()} />}
      {data.error && data.data && <ErrorNotice error={data.error} title="Could not refresh the list." />}
      {!data.data && data.loading && <Loading label="Loading webhooks…" />}
      {data.data && groups.length === 0 && (
        <Empty>
          <p>
            Webhooks belong to API keys. <Link to="/keys">Create a key</Link> with the <code>webhooks:manage</code> scope first.
          </p>
        </Empty>
      )}
      {groups.map(({ key, webhooks }) => {
        const canManage = key.scopes.includes('webhooks:manage') && key.revokedAt === null;
        return (
          <section key={key.id} className="section key-group" aria-labelledby={`key-${key.id}`} data-key-id={key.id}>
            <div className="section-head">
              <h2 id={`key-${key.id}`}>
                {key.name} <code className="muted">{key.prefix}…</code> <EnvironmentBadge environment={key.environment} />
                {key.isActive && key.revokedAt && (
                  <span className="key-rotated"> (rotated, expires {formatShortDateTime(key.revokedAt)})</span>
                )}
              </h2>
              {canManage && (
                <button
                  type="button"
                  className="primary"
                  onClick={() => setCreatingFor(key)}
                  disabled={limit !== undefined && webhooks.length >= limit}
                  aria-describedby={`limit-${key.id}`}
                >
                  Add webhook<span className="visually-hidden"> for {key.name}</span>
                </button>
              )}
            </div>
            <p className="hint" id={`limit-${key.id}`}>
              {canManage
                ? limit !== undefined && `${webhooks.length} of ${limit} webhooks.`
                : isRevoked(key)
                  ? 'This key is revoked: its webhooks get no new events.'
                  : key.revokedAt !== null
                    ? 'This key is being rotated out: add new webhooks to its successor.'
                    : 'This key lacks the webhooks:manage scope, so it cannot have webhooks. Create a key with that scope.'}
            </p>
            {webhooks.length === 0 ? (
              canManage && <p className="empty-inline">No webhooks for this key yet.</p>
            ) : (
              <ul className="webhook-list" aria-busy={data.loading}>
                {webhooks.map((w) => (
                  <WebhookItem
                    key={w.id}
                    webhook={w}
                    apiKey={key}
                    onEdit={setEditing}
                    onDelete={setDeleting}
                    onRotate={setRotating}
                    onRecover={setRecovering}
                    onChanged={replaceWebhook}
                  />
                ))}
              </ul>
            )}
          </section>
        );
      })}

      <CreateWebhookDialog apiKey={creatingFor} onClose={() => setCreatingFor(null)} onCreated={reloadWebhooks} />
      <EditWebhookDialog
        webhook={editing}
        apiKey={data.data?.keys.find((k) => k.id === editing?.apiKeyId) ?? null}
        onClose={() => setEditing(null)}
        onSaved={replaceWebhook}
      />
      <DeleteWebhookDialog webhook={deleting} onClose={() => setDeleting(null)} onDeleted={reloadWebhooks} />
      <RotateSecretDialog
        webhook={rotating}
        onClose={() => setRotating(null)}
        onRotated={(w) => {
          replaceWebhook(w);
          void invalidate(queryKeys.webhookSecret(w.id));
        }}
      />
      <RecoverDialog webhook={recovering} onClose={() => setRecovering(null)} />
    </>
  );
}

function WebhookItem({
  webhook,
  apiKey,
  onEdit,
  onDelete,
  onRotate,
  onRecover,
  onChanged,
}: {
  webhook: DeveloperWebhook;
  apiKey: DeveloperKey;
  onEdit: (w: DeveloperWebhook) => void;
  onDelete: (w: DeveloperWebhook) => void;
  onRotate: (w: DeveloperWebhook) => void;
  onRecover: (w: DeveloperWebhook) => void;
  onChanged: (w: DeveloperWebhook) => void;
}) {
  const [note, setNote] = useState<string | null>(null);
  const toggle = useMutation({
    mutationFn: () => developer.webhooks.update(webhook.id, { isActive: !webhook.isActive }),
    onMutate: () => setNote(null),
    onSuccess: (updated) => {
      onChanged(updated);
      setNote(updated.isActive ? 'Enabled: new events are delivered again.' : 'Disabled: no new deliveries until you enable it.');
    },
  });
  const busy = toggle.isPending;

  return (
    <li className="card webhook" data-webhook-id={webhook.id}>
      <div className="webhook-head">
        <p className="webhook-url mono">{webhook.url}</p>
        <WebhookStatus webhook={webhook} />
      </div>
      <ul className="chips" aria-label="Events">
        {webhook.events.map((e) => (
          <li key={e}>{e}</li>
        ))}
      </ul>
      <WebhookHealthCard webhook={webhook} />
      <SecretFormNotice webhook={webhook} onRotate={onRotate} />
      <p className="hint">Created {formatDateTime(webhook.createdAt)}.</p>
      <div className="actions">
        <Link to={`/webhooks/${webhook.id}`} className="button">
          Delivery log
        </Link>
        <TestEventPicker
          webhookId={webhook.id}
          scopes={apiKey.scopes}
          disabled={busy || !webhook.isActive}
          onSent={(_d, kind) => {
            toggle.reset();
            setNote(`Test ${kind === 'ping' ? 'ping' : `${kind} sample`} queued. Watch it in the delivery log.`);
          }}
        />
        <button type="button" onClick={() => onRecover(webhook)} disabled={busy || !webhook.isActive}>
          Recover failed…
        </button>
        <button type="button" onClick={() => onRotate(webhook)} disabled={busy}>
          Rotate secret
        </button>
        <button type="button" onClick={() => onEdit(webhook)} disabled={busy}>
          Edit
        </button>
        <button type="button" onClick={() => toggle.mutate()} disabled={busy}>
          {webhook.isActive ? 'Disable' : 'Enable'}
        </button>
        <button type="button" className="danger" onClick={() => onDelete(webhook)} disabled={busy}>
          Delete
        </button>
      </div>
      <p className="hint" role="status">
        {note} {note?.startsWith('Test ') && <Link to={`/webhooks/${webhook.id}`}>Open the delivery log</Link>}
      </p>
      <ErrorNotice error={toggle.error} />
    </li>
  );
}
