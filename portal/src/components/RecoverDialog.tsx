/**
 * "Recover failed deliveries": every FAILED or DEAD delivery of a time window is queued again, oldest
 * first (POST …/webhooks/{id}/recover). The window is entered in the browser's time zone, said so
 * beside the fields; it may reach 35 days back.
 */

import type { DeveloperWebhook } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { developer } from '../client';
import { formatNumber, localTimeZone } from '../format';
import { Dialog } from './Dialog';
import { ErrorNotice, fieldMessages } from './ErrorNotice';

const DAY = 86_400_000;

/** A Date as the value of <input type="datetime-local"> (local time, to the minute). */
function localInput(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function RecoverDialog({ webhook, onClose }: { webhook: DeveloperWebhook | null; onClose: () => void }) {
  const [since, setSince] = useState(() => localInput(new Date(Date.now() - DAY)));
  const [until, setUntil] = useState('');
  const [checked, setChecked] = useState<string | null>(null);
  const [queued, setQueued] = useState<number | null>(null);
  const sinceId = useId();
  const untilId = useId();
  const recover = useMutation({
    mutationFn: ({ id, body }: { id: string; body: { since: string; until?: string } }) => developer.webhooks.recover(id, body),
    onSuccess: (result) => setQueued(result.queued),
  });
  const close = () => {
    onClose();
    setQueued(null);
    setChecked(null);
    setUntil('');
    setSince(localInput(new Date(Date.now() - DAY)));
    recover.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!webhook) return;
    const from = new Date(since);
    const to = until ? new Date(until) : null;
    // Checked here, in plain words, before anything is sent.
    let problem: string | null = null;
    if (Number.isNaN(from.getTime())) problem = 'Choose when the window starts.';
    else if (from.getTime() < Date.now() - 35 * DAY)
      problem = 'The window can start at most 35 days ago: older deliveries are no longer kept.';
    else if (to && from >= to) problem = 'The start must be before the end.';
    setChecked(problem);
    if (!problem)
      recover.mutate({ id: webhook.id, body: { since: from.toISOString(), ...(to ? { until: to.toISOString() } : {}) } });
  };
  const sinceErrors = checked ? [checked] : fieldMessages(recover.error, 'since');
  return (
    <Dialog
      open={webhook !== null}
      title="Recover failed deliveries"
      onClose={close}
      dismissable={!recover.isPending}
      focusKey={queued === null ? 'form' : 'done'}
    >
      {queued !== null ? (
        <>
          <p role="status" data-testid="recover-result">
            {queued === 0
              ? 'No failed or dead deliveries in that window: nothing to send again.'
              : `${formatNumber(queued)} failed or dead ${queued === 1 ? 'delivery is' : 'deliveries are'} queued again, oldest first. Watch them in the delivery log.`}
          </p>
          <div className="dialog-actions">
            <button type="button" className="primary" onClick={close}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <p>
            Every delivery of <span className="mono">{webhook?.url}</span> that is FAILED or DEAD and was created in this window
            is sent again with the whole retry schedule, as Redeliver does. Large windows go out in batches.
          </p>
          <p className="hint">Times are in your time zone ({localTimeZone()}).</p>
          <label htmlFor={sinceId}>From</label>
          <input
            id={sinceId}
            type="datetime-local"
            value={since}
            onChange={(e) => setSince(e.target.value)}
            aria-invalid={sinceErrors.length > 0}
            aria-describedby={`${sinceId}-hint`}
            data-autofocus
          />
          <p id={`${sinceId}-hint`} className={sinceErrors.length ? 'field-error' : 'hint'}>
            {sinceErrors.length ? sinceErrors.join(' ') : 'At most 35 days ago.'}
          </p>
          <label htmlFor={untilId}>Until (optional)</label>
          <input id={untilId} type="datetime-local" value={until} onChange={(e) => setUntil(e.target.value)} />
          <p className="hint">Leave empty for “until now”.</p>
          <ErrorNotice error={recover.error} inlineFields={['since']} />
          <div className="dialog-actions">
            <button type="button" onClick={close} disabled={recover.isPending}>
              Cancel
            </button>
            <button type="submit" className="primary" disabled={recover.isPending || !webhook?.isActive}>
              {recover.isPending ? 'Queuing…' : 'Recover deliveries'}
            </button>
          </div>
          {!webhook?.isActive && <p className="hint">Enable the webhook first: a disabled webhook sends nothing.</p>}
        </form>
      )}
    </Dialog>
  );
}
