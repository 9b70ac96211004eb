/**
 * The webhooks page's dialogs: add (the signing secret shown once, closed only on "I have copied it"),
 * edit and delete, over one URL-and-events form that says each problem once, beside its field, and
 * forgets it as soon as the input changes (docs/portal.md, Errors). The events offered are the event
 * catalog's for the key; an edit sends the URL and every kind the form shows ticked, and the form shows
 * every kind the webhook has (docs/portal.md, "Event kinds").
 */

import type {
  ApiKeyScope,
  DeveloperKey,
  DeveloperWebhook,
  DeveloperWebhookCreated,
  WebhookEvent,
} from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { developer } from '../client';
import { type EventKindOption, kindsForKey, kindsShown } from '../event-kinds';
import { useEventCatalog } from '../query';
import { ConfirmDialog } from './ConfirmDialog';
import { Dialog } from './Dialog';
import { ErrorNotice } from './ErrorNotice';
import { CopiedButton, SecretReveal, secretBlockedNote } from './SecretReveal';
import { LoadError, Loading } from './States';
import { checkWebhookForm, eventsToSend, type FormProblems, INLINE_CODES, INLINE_FIELDS, WebhookFields } from './WebhookForm';

/** The kinds the form shows for a key's webhook that has `held` now: null until the catalog is in. */
function useKindsShown(scopes: readonly ApiKeyScope[], held: readonly string[]) {
  const catalog = useEventCatalog();
  const kinds: EventKindOption[] | null = catalog.data ? kindsShown(kindsForKey(catalog.data, scopes), held) : null;
  const notice = catalog.data ? null : catalog.error ? (
    <LoadError error={catalog.error} onRetry={() => void catalog.reload()} />
  ) : (
    <Loading label="Loading the event kinds…" />
  );
  return { kinds, notice };
}

export function CreateWebhookDialog({
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
  const { kinds, notice } = useKindsShown(apiKey?.scopes ?? [], []);
  const create = useMutation({
    mutationFn: ({ apiKeyId, shown }: { apiKeyId: string; shown: readonly EventKindOption[] }) =>
      developer.webhooks.create({ apiKeyId, url, events: eventsToSend(shown, events) }),
    onSuccess: (webhook) => {
      setCreated(webhook);
      onCreated();
    },
  });
  const close = () => {
    onClose();
    setCreated(null);
    setUrl('');
    setEvents(['order.assigned_to_partner', 'order.status_changed']);
    setChecked(undefined);
    create.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems = checkWebhookForm(url, events);
    setChecked(problems ?? undefined);
    if (apiKey && kinds && !problems) create.mutate({ apiKeyId: apiKey.id, shown: kinds });
  };

  return (
    <Dialog
      open={apiKey !== null}
      title={created ? 'Webhook created' : `Add a webhook for “${apiKey?.name ?? ''}”`}
      onClose={close}
      dismissable={!create.isPending && !created}
      blockedNote={secretBlockedNote('signing secret')}
      focusKey={created ? 'created' : 'form'}
    >
      {created ? (
        <>
          <SecretReveal label="Signing secret" noun="signing secret" value={created.secret} testId="webhook-secret" />
          <p>
            Verify every delivery with this secret, by either scheme: the <code>X-Partner-Signature</code> header, or the Standard
            Webhooks headers <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code>.{' '}
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
          {notice}
          <WebhookFields
            url={url}
            setUrl={setUrl}
            kinds={kinds ?? []}
            events={events}
            setEvents={setEvents}
            error={create.error}
            checked={checked}
            onEdit={() => {
              create.reset();
              setChecked(undefined);
            }}
          />
          <div className="dialog-actions">
            <button type="button" onClick={close} disabled={create.isPending}>
              Cancel
            </button>
            <button type="submit" className="primary" disabled={create.isPending || !kinds}>
              {create.isPending ? 'Creating…' : 'Create webhook'}
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

export function EditWebhookDialog({
  webhook,
  apiKey,
  onClose,
  onSaved,
}: {
  webhook: DeveloperWebhook | null;
  /** The webhook's key: its scopes decide the kinds offered. */
  apiKey: DeveloperKey | null;
  onClose: () => void;
  onSaved: (w: DeveloperWebhook) => void;
}) {
  // Keyed by webhook id so the form starts from the webhook being edited.
  return (
    <Dialog open={webhook !== null} title="Edit webhook" onClose={onClose}>
      {webhook && (
        <EditWebhookForm key={webhook.id} webhook={webhook} scopes={apiKey?.scopes ?? []} onClose={onClose} onSaved={onSaved} />
      )}
    </Dialog>
  );
}

function EditWebhookForm({
  webhook,
  scopes,
  onClose,
  onSaved,
}: {
  webhook: DeveloperWebhook;
  scopes: readonly ApiKeyScope[];
  onClose: () => void;
  onSaved: (w: DeveloperWebhook) => void;
}) {
  const [url, setUrl] = useState(webhook.url);
  const [events, setEvents] = useState<WebhookEvent[]>(webhook.events);
  const [checked, setChecked] = useState<FormProblems | undefined>(undefined);
  const { kinds, notice } = useKindsShown(scopes, webhook.events);
  // The URL and the events as the form shows them, always both: what the form shows is what is saved.
  // isActive is the list's own switch (saving it here would also clear the failure streak).
  const save = useMutation({
    mutationFn: (shown: readonly EventKindOption[]) =>
      developer.webhooks.update(webhook.id, { url, events: eventsToSend(shown, events) }),
    onSuccess: (saved) => {
      onSaved(saved);
      onClose();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems = checkWebhookForm(url, events);
    setChecked(problems ?? undefined);
    if (kinds && !problems) save.mutate(kinds);
  };
  return (
    <form onSubmit={submit} noValidate>
      <ErrorNotice error={save.error} inlineFields={INLINE_FIELDS} inlineCodes={INLINE_CODES} />
      {notice}
      <WebhookFields
        url={url}
        setUrl={setUrl}
        kinds={kinds ?? []}
        events={events}
        setEvents={setEvents}
        error={save.error}
        checked={checked}
        onEdit={() => {
          save.reset();
          setChecked(undefined);
        }}
      />
      <div className="dialog-actions">
        <button type="button" onClick={onClose} disabled={save.isPending}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={save.isPending || !kinds}>
          {save.isPending ? 'Saving…' : 'Save changes'}
        </button>
      </div>
    </form>
  );
}

export function DeleteWebhookDialog({
  webhook,
  onClose,
  onDeleted,
}: {
  webhook: DeveloperWebhook | null;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const remove = useMutation({
    mutationFn: (id: string) => developer.webhooks.delete(id),
    onSuccess: () => {
      onDeleted();
      onClose();
    },
  });
  const close = () => {
    onClose();
    remove.reset();
  };
  return (
    <ConfirmDialog
      open={webhook !== null}
      title="Delete this webhook?"
      confirmLabel="Delete webhook"
      busyLabel="Deleting…"
      busy={remove.isPending}
      error={remove.error}
      onConfirm={() => webhook && remove.mutate(webhook.id)}
      onClose={close}
    >
      <p>
        <span className="mono">{webhook?.url}</span> stops receiving events, and its delivery history is deleted with it. This
        cannot be undone.
      </p>
    </ConfirmDialog>
  );
}
