/**
 * The webhook form's URL and events, shared by add and edit: what the form checks before sending, and
 * each problem said once, beside its field, forgotten as soon as the input changes (docs/portal.md,
 * Errors).
 */

import type { PartnerApiError } from '@partner-logistics/sdk/developer';
import type { WebhookEvent } from '@partner-logistics/sdk/types';
import { useId } from 'react';
import { WEBHOOK_EVENTS } from '../types';
import { fieldMessages } from './ErrorNotice';

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

export function WebhookFields({
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
  error: PartnerApiError | null;
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
