/**
 * The webhook form's URL and events, shared by add and edit: what the form checks before sending, and
 * each problem said once, beside its field, forgotten as soon as the input changes (docs/portal.md,
 * Errors). The events are every kind of the event catalog the key may receive, grouped, plus any kind
 * the webhook already has (docs/portal.md, "Event kinds"): a tick changes that one kind and nothing
 * else, so no kind is ever dropped by a save.
 */

import type { WebhookEvent } from '@partner-logistics/sdk/types';
import { useId } from 'react';
import { toApiError } from '../client';
import { type EventKindOption, groupKinds } from '../event-kinds';
import { fieldMessages } from './ErrorNotice';
import { InlineText } from './InlineText';

/** Fields the webhook form shows its own errors beside. */
export const INLINE_FIELDS = ['url', 'events'];

/** The code the URL field explains beside itself. */
export const INLINE_CODES = ['ERR_WEBHOOK_URL_INVALID'];

/** URL and events: the form shared by create and edit. */
export interface FormProblems {
  url?: string;
  events?: string;
}

/** What the form checks before sending; the API has the last word (https only, no credentials, …). */
export function checkWebhookForm(url: string, events: WebhookEvent[]): FormProblems | null {
  const problems: FormProblems = {};
  if (url.trim() === '') problems.url = 'Enter the address of your endpoint, e.g. https://example.com/webhooks.';
  else if (!URL.canParse(url.trim()))
    problems.url = 'This is not a web address: it should look like https://example.com/webhooks.';
  if (events.length === 0) problems.events = 'Choose at least one event.';
  return problems.url || problems.events ? problems : null;
}

/**
 * The events to send: the ticked kinds in the order the form shows them, then any ticked kind it does not
 * show (none while the form shows every kind the webhook has; kept all the same, never dropped).
 */
export function eventsToSend(shown: readonly EventKindOption[], ticked: readonly WebhookEvent[]): WebhookEvent[] {
  const order = shown.map((k) => k.type);
  const rank = (e: string) => (order.includes(e) ? order.indexOf(e) : order.length);
  return [...ticked].sort((a, b) => rank(a) - rank(b));
}

export function WebhookFields({
  url,
  setUrl,
  kinds,
  events,
  setEvents,
  error: failure,
  checked,
  onEdit,
}: {
  url: string;
  setUrl: (v: string) => void;
  /** Every kind the form shows (event-kinds.ts, kindsShown). */
  kinds: readonly EventKindOption[];
  events: WebhookEvent[];
  setEvents: (v: WebhookEvent[]) => void;
  error: Error | null;
  /** Problems the form found itself before sending, in plain words. */
  checked?: FormProblems;
  /** Called on every change: the form clears what it said about the previous input. */
  onEdit: () => void;
}) {
  const urlId = useId();
  const error = failure && toApiError(failure);
  const serverUrlErrors = [
    ...fieldMessages(error, 'url'),
    ...(error?.code === 'ERR_WEBHOOK_URL_INVALID' ? [error.message.replace(/^url /, '')] : []),
  ].map((m) => `The endpoint URL ${m}.`.replace(/\.\.$/, '.'));
  const urlErrors = checked?.url ? [checked.url] : serverUrlErrors;
  const eventErrors = checked?.events
    ? [checked.events]
    : fieldMessages(error, 'events').map((m) => `The events ${m}.`.replace(/\.\.$/, '.'));
  // One kind in or out; every other kind stays as it is.
  const toggle = (event: WebhookEvent, on: boolean) => {
    onEdit();
    const others = events.filter((e) => e !== event);
    setEvents(eventsToSend(kinds, on ? [...others, event] : others));
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
      <fieldset className="event-kinds" data-testid="event-kinds">
        <legend>Events</legend>
        {groupKinds(kinds).map((group) => (
          <fieldset key={group.label} className="event-group" data-group={group.label}>
            <legend>{group.label}</legend>
            {group.kinds.map((k) => (
              <label key={k.type} className="option">
                <input
                  type="checkbox"
                  value={k.type}
                  checked={events.includes(k.type as WebhookEvent)}
                  onChange={(ev) => toggle(k.type as WebhookEvent, ev.target.checked)}
                />
                <span>
                  <code>{k.type}</code>
                  <span className="option-meaning">
                    <InlineText text={k.meaning} />
                  </span>
                </span>
              </label>
            ))}
          </fieldset>
        ))}
        {eventErrors.length > 0 && <p className="field-error">{eventErrors.join(' ')}</p>}
      </fieldset>
    </>
  );
}
