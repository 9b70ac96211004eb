/**
 * Webhooks, grouped by the key they belong to: create (the signing secret shown once), edit URL and
 * events, enable / disable, delete, send a test event of any kind, rotate the signing secret, recover
 * failed deliveries, and each endpoint's health. Webhooks follow the realtime channel
 * ('webhook.updated': streak, isActive, rotation) without reloading.
 */
import { type FormEvent, useEffect, useId, useState } from 'react';
import { type ApiError, api } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Dialog } from '../components/Dialog';
import { ErrorNotice, fieldMessages } from '../components/ErrorNotice';
import { isRevoked } from '../components/KeyStatus';
import { usePageTitle } from '../components/PageTitle';
import { RecoverDialog } from '../components/RecoverDialog';
import { RotateSecretDialog } from '../components/RotateSecretDialog';
import { CopiedButton, SecretReveal, secretBlockedNote } from '../components/SecretReveal';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { TestEventPicker } from '../components/TestEventPicker';
import { WebhookHealthCard } from '../components/WebhookHealthCard';
import { formatDateTime, formatShortDateTime } from '../format';
import { toApiError, useAction, useResource } from '../hooks';
import { subscribe } from '../realtime';
import { Link } from '../router';
import {
  type DeveloperKey,
  type DeveloperWebhook,
  type DeveloperWebhookCreated,
  WEBHOOK_EVENTS,
  type WebhookEvent,
} from '../types';
import { EnvironmentBadge } from './Keys';

/** Fields the webhook form shows its own errors beside. */
const INLINE_FIELDS = ['url', 'events'];
/** The code the URL field explains beside itself. */
const INLINE_CODES = ['ERR_WEBHOOK_URL_INVALID'];

/** Webhooks per key (spec 8). */
const WEBHOOK_LIMIT = 5;

export function Webhooks() {
  usePageTitle('Webhooks');
  const data = useResource(async () => {
    const [keys, webhooks] = await Promise.all([api.listKeys(), api.listWebhooks()]);
    return { keys, webhooks };
  }, []);
  const [creatingFor, setCreatingFor] = useState<DeveloperKey | null>(null);
  const [editing, setEditing] = useState<DeveloperWebhook | null>(null);
  const [deleting, setDeleting] = useState<DeveloperWebhook | null>(null);
  const [rotating, setRotating] = useState<DeveloperWebhook | null>(null);
  const [recovering, setRecovering] = useState<DeveloperWebhook | null>(null);

  const { setData } = data;
  const replace = (hook: DeveloperWebhook) =>
    setData((d) => d && { ...d, webhooks: d.webhooks.map((w) => (w.id === hook.id ? hook : w)) });
  useEffect(
    () =>
      subscribe('webhook.updated', ({ webhook }) =>
        setData((d) => d && { ...d, webhooks: d.webhooks.map((w) => (w.id === webhook.id ? webhook : w)) }),
      ),
    [setData],
  );

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
                  disabled={webhooks.length >= WEBHOOK_LIMIT}
                  aria-describedby={`limit-${key.id}`}
                >
                  Add webhook<span className="visually-hidden"> for {key.name}</span>
                </button>
              )}
            </div>
            <p className="hint" id={`limit-${key.id}`}>
              {canManage
                ? `${webhooks.length} of ${WEBHOOK_LIMIT} webhooks.`
                : isRevoked(key)
                  ? 'This key is revoked: its webhooks get no new events.'
                  : key.revokedAt !== null
                    ? 'This key is being rotated out: add new webhooks to its successor.'
                    : 'This key lacks the webhooks:manage scope, so it cannot have webhooks. Create a key with that scope.'}
            </p>
            {webhooks.length === 0 ? (
              canManage && <p className="empty-inline">No webhooks for this key yet.</p>
            ) : (
              <ul className="webhook-list">
                {webhooks.map((w) => (
                  <WebhookItem
                    key={w.id}
                    webhook={w}
                    onEdit={setEditing}
                    onDelete={setDeleting}
                    onRotate={setRotating}
                    onRecover={setRecovering}
                    onChanged={replace}
                  />
                ))}
              </ul>
            )}
          </section>
        );
      })}

      <CreateWebhookDialog apiKey={creatingFor} onClose={() => setCreatingFor(null)} onCreated={() => void data.reload()} />
      <EditWebhookDialog webhook={editing} onClose={() => setEditing(null)} onSaved={replace} />
      <DeleteWebhookDialog webhook={deleting} onClose={() => setDeleting(null)} onDeleted={() => void data.reload()} />
      <RotateSecretDialog webhook={rotating} onClose={() => setRotating(null)} onRotated={replace} />
      <RecoverDialog webhook={recovering} onClose={() => setRecovering(null)} />
    </>
  );
}

export function WebhookStatus({ webhook }: { webhook: DeveloperWebhook }) {
  return webhook.isActive ? <Badge tone="ok">Active</Badge> : <Badge tone="bad">Disabled</Badge>;
}

function WebhookItem({
  webhook,
  onEdit,
  onDelete,
  onRotate,
  onRecover,
  onChanged,
}: {
  webhook: DeveloperWebhook;
  onEdit: (w: DeveloperWebhook) => void;
  onDelete: (w: DeveloperWebhook) => void;
  onRotate: (w: DeveloperWebhook) => void;
  onRecover: (w: DeveloperWebhook) => void;
  onChanged: (w: DeveloperWebhook) => void;
}) {
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const act = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setNote(null);
    try {
      await fn();
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  };

  const toggle = () =>
    act(async () => {
      const updated = await api.updateWebhook(webhook.id, { isActive: !webhook.isActive });
      onChanged(updated);
      setNote(updated.isActive ? 'Enabled: new events are delivered again.' : 'Disabled: no new deliveries until you enable it.');
    });

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
      <p className="hint">Created {formatDateTime(webhook.createdAt)}.</p>
      <div className="actions">
        <Link to={`/webhooks/${webhook.id}`} className="button">
          Delivery log
        </Link>
        <TestEventPicker
          webhookId={webhook.id}
          disabled={busy || !webhook.isActive}
          onSent={(_d, kind) => {
            setError(null);
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
        <button type="button" onClick={() => void toggle()} disabled={busy}>
          {webhook.isActive ? 'Disable' : 'Enable'}
        </button>
        <button type="button" className="danger" onClick={() => onDelete(webhook)} disabled={busy}>
          Delete
        </button>
      </div>
      <p className="hint" role="status">
        {note} {note?.startsWith('Test ') && <Link to={`/webhooks/${webhook.id}`}>Open the delivery log</Link>}
      </p>
      <ErrorNotice error={error} />
    </li>
  );
}

/** URL and events: the form shared by create and edit. */
interface FormProblems {
  url?: string;
  events?: string;
}

/** What the form checks before sending; the API has the last word (https only, no credentials, …). */
function checkWebhookForm(url: string, events: WebhookEvent[]): FormProblems | null {
  const problems: FormProblems = {};
  if (url.trim() === '') problems.url = 'Enter the address of your endpoint, e.g. https://example.com/webhooks.';
  else if (!URL.canParse(url.trim()))
    problems.url = 'This is not a web address: it should look like https://example.com/webhooks.';
  if (events.length === 0) problems.events = 'Choose at least one event.';
  return problems.url || problems.events ? problems : null;
}

function WebhookFields({
  url,
  setUrl,
  events,
  setEvents,
  error,
  checked,
  onEdit,
}: {
  url: string;
  setUrl: (v: string) => void;
  events: WebhookEvent[];
  setEvents: (v: WebhookEvent[]) => void;
  error: ApiError | null;
  /** Problems the form found itself before sending, in plain words. */
  checked?: FormProblems;
  /** Called on every change: the form clears what it said about the previous input. */
  onEdit: () => void;
}) {
  const urlId = useId();
  const serverUrlErrors = [
    ...fieldMessages(error, 'url'),
    ...(error?.code === 'ERR_WEBHOOK_URL_INVALID' ? [error.message.replace(/^url /, '')] : []),
  ].map((m) => `The endpoint URL ${m}.`.replace(/\.\.$/, '.'));
  const urlErrors = checked?.url ? [checked.url] : serverUrlErrors;
  const eventErrors = checked?.events
    ? [checked.events]
    : fieldMessages(error, 'events').map((m) => `The events ${m}.`.replace(/\.\.$/, '.'));
  const toggle = (event: WebhookEvent, on: boolean) => {
    onEdit();
    setEvents(WEBHOOK_EVENTS.map((e) => e.value).filter((v) => (v === event ? on : events.includes(v))));
  };
  return (
    <>
      <label htmlFor={urlId}>Endpoint URL</label>
      <input
        id={urlId}
        type="url"
        inputMode="url"
        className="mono"
        placeholder="https://example.com/webhooks/partner"
        value={url}
        onChange={(e) => {
          onEdit();
          setUrl(e.target.value);
        }}
        aria-invalid={urlErrors.length > 0}
        aria-describedby={`${urlId}-hint`}
        data-autofocus
      />
      <p
        id={`${urlId}-hint`}
        className={urlErrors.length ? 'field-error' : 'hint'}
        role={serverUrlErrors.length && !checked?.url ? 'alert' : undefined}
        data-error-code={serverUrlErrors.length && !checked?.url ? error?.code : undefined}
      >
        {urlErrors.length ? urlErrors.join(' ') : 'HTTPS only (plain http is accepted for localhost outside production).'}
      </p>
      <fieldset>
        <legend>Events</legend>
        {WEBHOOK_EVENTS.map((e) => (
          <label key={e.value} className="option">
            <input type="checkbox" checked={events.includes(e.value)} onChange={(ev) => toggle(e.value, ev.target.checked)} />
            <span>
              <code>{e.value}</code>
              <span className="option-meaning">{e.meaning}</span>
            </span>
          </label>
        ))}
        {eventErrors.length > 0 && <p className="field-error">{eventErrors.join(' ')}</p>}
      </fieldset>
    </>
  );
}

function CreateWebhookDialog({
  apiKey,
  onClose,
  onCreated,
}: {
  apiKey: DeveloperKey | null;
  onClose: () => void;
  onCreated: () => void;
}) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEvent[]>(['order.assigned_to_partner', 'order.status_changed']);
  const [created, setCreated] = useState<DeveloperWebhookCreated | null>(null);
  const [checked, setChecked] = useState<FormProblems | undefined>(undefined);
  const create = useAction(async (apiKeyId: string) => {
    setCreated(await api.createWebhook({ apiKeyId, url, events }));
    onCreated();
  });
  const close = () => {
    onClose();
    setCreated(null);
    setUrl('');
    setEvents(['order.assigned_to_partner', 'order.status_changed']);
    setChecked(undefined);
    create.setError(null);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems = checkWebhookForm(url, events);
    setChecked(problems ?? undefined);
    if (apiKey && !problems) void create.run(apiKey.id);
  };

  return (
    <Dialog
      open={apiKey !== null}
      title={created ? 'Webhook created' : `Add a webhook for “${apiKey?.name ?? ''}”`}
      onClose={close}
      dismissable={!create.busy && !created}
      blockedNote={secretBlockedNote('signing secret')}
      focusKey={created ? 'created' : 'form'}
    >
      {created ? (
        <>
          <SecretReveal label="Signing secret" noun="signing secret" value={created.secret} testId="webhook-secret" />
          <p>
            Verify the <code>X-Partner-Signature</code> header of every delivery with this secret.{' '}
            {/* A new tab, so following the link does not close this one-time dialog. */}
            <a href="/portal/docs" target="_blank" rel="noopener">
              See how (opens in a new tab)
            </a>
            .
          </p>
          <CopiedButton onClick={close} />
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <ErrorNotice error={create.error} inlineFields={INLINE_FIELDS} inlineCodes={INLINE_CODES} />
          <WebhookFields
            url={url}
            setUrl={setUrl}
            events={events}
            setEvents={setEvents}
            error={create.error}
            checked={checked}
            onEdit={() => {
              create.setError(null);
              setChecked(undefined);
            }}
          />
          <div className="dialog-actions">
            <button type="button" onClick={close} disabled={create.busy}>
              Cancel
            </button>
            <button type="submit" className="primary" disabled={create.busy}>
              {create.busy ? 'Creating…' : 'Create webhook'}
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

function EditWebhookDialog({
  webhook,
  onClose,
  onSaved,
}: {
  webhook: DeveloperWebhook | null;
  onClose: () => void;
  onSaved: (w: DeveloperWebhook) => void;
}) {
  // Keyed by webhook id so the form starts from the webhook being edited.
  return (
    <Dialog open={webhook !== null} title="Edit webhook" onClose={onClose}>
      {webhook && <EditWebhookForm key={webhook.id} webhook={webhook} onClose={onClose} onSaved={onSaved} />}
    </Dialog>
  );
}

function EditWebhookForm({
  webhook,
  onClose,
  onSaved,
}: {
  webhook: DeveloperWebhook;
  onClose: () => void;
  onSaved: (w: DeveloperWebhook) => void;
}) {
  const [url, setUrl] = useState(webhook.url);
  const [events, setEvents] = useState<WebhookEvent[]>(webhook.events);
  const [checked, setChecked] = useState<FormProblems | undefined>(undefined);
  const save = useAction(async () => {
    const body: { url?: string; events?: WebhookEvent[] } = {};
    if (url !== webhook.url) body.url = url;
    if (events.join() !== webhook.events.join()) body.events = events;
    onSaved(await api.updateWebhook(webhook.id, body));
    onClose();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems = checkWebhookForm(url, events);
    setChecked(problems ?? undefined);
    if (!problems) void save.run();
  };
  return (
    <form onSubmit={submit} noValidate>
      <ErrorNotice error={save.error} inlineFields={INLINE_FIELDS} inlineCodes={INLINE_CODES} />
      <WebhookFields
        url={url}
        setUrl={setUrl}
        events={events}
        setEvents={setEvents}
        error={save.error}
        checked={checked}
        onEdit={() => {
          save.setError(null);
          setChecked(undefined);
        }}
      />
      <div className="dialog-actions">
        <button type="button" onClick={onClose} disabled={save.busy}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save changes'}
        </button>
      </div>
    </form>
  );
}

function DeleteWebhookDialog({
  webhook,
  onClose,
  onDeleted,
}: {
  webhook: DeveloperWebhook | null;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const remove = useAction(async (id: string) => {
    await api.deleteWebhook(id);
    onDeleted();
    onClose();
  });
  const close = () => {
    onClose();
    remove.setError(null);
  };
  return (
    <ConfirmDialog
      open={webhook !== null}
      title="Delete this webhook?"
      confirmLabel="Delete webhook"
      busyLabel="Deleting…"
      busy={remove.busy}
      error={remove.error}
      onConfirm={() => webhook && void remove.run(webhook.id)}
      onClose={close}
    >
      <p>
        <span className="mono">{webhook?.url}</span> stops receiving events, and its delivery history is deleted with it. This
        cannot be undone.
      </p>
    </ConfirmDialog>
  );
}
