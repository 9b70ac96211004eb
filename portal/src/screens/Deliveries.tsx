/**
 * The delivery log of one webhook: a paged table, newest first, filtered by status, with redeliver, a
 * test event of any kind, recovering a window of failed deliveries, and the endpoint's health. Each row
 * opens the delivery's detail (payload and attempts). Rows follow the realtime channel
 * ('delivery.updated'): an attempt updates its row in place and a new delivery appears at the top of
 * page 1, without reloading. After a reconnect the page is reloaded, since events sent while offline
 * are not replayed; what arrived live stays shown until a read that started after it lands.
 *
 * Redeliver shows itself: the row is reset at once (PENDING, 0 attempts) and keeps a "queued again at"
 * line, so an attempt that fails again a moment later does not look as if nothing happened; the line
 * goes once the delivery is delivered or a later attempt is made.
 */

import type { DeveloperDelivery, DeveloperWebhook, WebhookDeliveryStatus } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { developer } from '../client';
import { ErrorNotice } from '../components/ErrorNotice';
import { LiveIndicator } from '../components/LiveIndicator';
import { PagedTable } from '../components/PagedTable';
import { usePageTitle } from '../components/PageTitle';
import { RecoverDialog } from '../components/RecoverDialog';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { TestEventPicker } from '../components/TestEventPicker';
import { WebhookHealthCard } from '../components/WebhookHealthCard';
import { WebhookStatus } from '../components/WebhookStatus';
import { DELIVERY_STATUS_TONE, upsert } from '../delivery-log';
import { formatDateTime, formatTime } from '../format';
import { queryKeys, type Resource, useApiQuery, useKeysAndWebhooks } from '../query';
import { onReconnect, subscribe } from '../realtime';
import { Link } from '../router';
import { DELIVERY_STATUSES, type Page } from '../types';

const PAGE_SIZE = 20;

/** A page of the log as read, with the number of live changes that had arrived when the read started. */
type StoredPage = Page<DeveloperDelivery> & { readAfter: number };

/** A delivery's newest state that arrived live (an event, an action's answer, a redeliver's reset), numbered. */
interface LiveChange {
  delivery: DeveloperDelivery;
  number: number;
}

export function Deliveries({ webhookId }: { webhookId: string }) {
  const [status, setStatus] = useState<WebhookDeliveryStatus | ''>('');
  const [page, setPage] = useState(1);
  const [note, setNote] = useState<string | null>(null);
  const [changed, setChanged] = useState<Record<string, number>>({});
  // Rows redelivered from this page: when, shown in the row until the page is left.
  const [requeuedAt, setRequeuedAt] = useState<Record<string, string>>({});
  const [recovering, setRecovering] = useState<DeveloperWebhook | null>(null);
  const filterId = useId();

  const hook = useKeysAndWebhooks();
  // What arrives live is kept beside the page as read, not written into it: a read that started before
  // a change (coming back to the tab, a reconnection, another filter or page) can land after it and
  // would put the row back as it was. A change is shown over the page until a read that started after
  // it lands; that read holds it, or something newer (an event is sent once its change has committed).
  const arrived = useRef(0);
  const [changes, setChanges] = useState<ReadonlyMap<string, LiveChange>>(new Map());
  const deliveries = useApiQuery(
    [...queryKeys.webhookDeliveries(webhookId), status, page],
    async (): Promise<StoredPage> => {
      const readAfter = arrived.current;
      const read = await developer.webhooks.listDeliveries(webhookId, { status: status || undefined, page, pageSize: PAGE_SIZE });
      return { ...read, readAfter };
    },
    { live: true },
  );
  const { reload } = deliveries;
  const readAfter = deliveries.data?.readAfter;
  useEffect(() => {
    if (readAfter === undefined) return;
    setChanges((c) => {
      const pending = [...c].filter(([, change]) => change.number > readAfter);
      return pending.length === c.size ? c : new Map(pending);
    });
  }, [readAfter]);
  usePageTitle('Delivery log');

  // Realtime events arrive in order for a delivery; an HTTP answer (test ping, redeliver) can be
  // overtaken by the events of the attempt it started. So events always apply, and an answer applies
  // only when no event for that delivery arrived while the request was in flight.
  const eventsSeen = useRef(new Map<string, number>());
  const show = useCallback((d: DeveloperDelivery) => {
    const number = ++arrived.current;
    setChanges((c) => new Map(c).set(d.id, { delivery: d, number }));
    setChanged((c) => ({ ...c, [d.id]: (c[d.id] ?? 0) + 1 }));
    // The "queued again" line explains the reset and the first attempt after it; once the delivery is
    // delivered, or a later attempt of the new round is made, it has done its job.
    if (d.status === 'DELIVERED' || d.attempts > 1) {
      setRequeuedAt((r) => {
        if (!(d.id in r)) return r;
        const { [d.id]: _done, ...rest } = r;
        return rest;
      });
      setNote((n) => (n?.startsWith('Delivery of ') ? null : n));
    }
  }, []);
  const applyAnswer = (d: DeveloperDelivery, seenBefore: number) => {
    if ((eventsSeen.current.get(d.id) ?? 0) === seenBefore) show(d);
  };

  useEffect(
    () =>
      subscribe('delivery.updated', ({ delivery }) => {
        if (delivery.webhookId !== webhookId) return;
        eventsSeen.current.set(delivery.id, (eventsSeen.current.get(delivery.id) ?? 0) + 1);
        show(delivery);
      }),
    [webhookId, show],
  );
  useEffect(() => onReconnect(() => void reload()), [reload]);

  const redeliver = useMutation({
    mutationFn: (d: DeveloperDelivery) => developer.deliveries.redeliver(d.id),
    onMutate: (d) => {
      setNote(null);
      const before = eventsSeen.current.get(d.id) ?? 0;
      // Reset the row at once, as the API does, and say when: the next attempt may fail again within
      // milliseconds, and the row must not look as if nothing happened.
      show({ ...d, status: 'PENDING', attempts: 0, statusCode: null, lastError: null, deliveredAt: null, nextAttemptAt: null });
      setRequeuedAt((r) => ({ ...r, [d.id]: new Date().toISOString() }));
      // Said at once: the delivery may be delivered (which clears the note) before the answer is back.
      setNote(`Delivery of ${d.event} queued again.`);
      return { before };
    },
    onSuccess: (answer, _d, context) => applyAnswer(answer, context.before),
    onError: (_err, d) => {
      setNote(null);
      show(d);
      setRequeuedAt(({ [d.id]: _gone, ...rest }) => rest);
    },
  });

  if (hook.error && !hook.data) return <LoadError error={hook.error} onRetry={() => void hook.reload()} />;
  if (!hook.data) return <Loading label="Loading webhook…" />;
  const webhook = hook.data.webhooks.find((w) => w.id === webhookId);
  const key = webhook && hook.data.keys.find((k) => k.id === webhook.apiKeyId);
  if (!webhook) {
    return (
      <>
        <h1 tabIndex={-1}>Webhook not found</h1>
        <Empty>
          <p>
            This webhook does not exist (it may have been deleted). Back to <Link to="/webhooks">webhooks</Link>.
          </p>
        </Empty>
      </>
    );
  }

  return (
    <>
      <p className="breadcrumb">
        <Link to="/webhooks">Webhooks</Link> / Delivery log
      </p>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>Delivery log</h1>
          <p className="meta">
            <span className="mono webhook-url">{webhook.url}</span> <WebhookStatus webhook={webhook} />
          </p>
          {key && (
            <p className="hint">
              Key {key.name} <code>{key.prefix}…</code>
            </p>
          )}
        </div>
        <div className="page-actions">
          <TestEventPicker
            webhookId={webhookId}
            scopes={key?.scopes ?? []}
            primary
            disabled={!webhook.isActive}
            onSent={(d, kind) => {
              applyAnswer(d, 0);
              setNote(kind === 'ping' ? 'Test ping queued.' : `Test ${kind} sample queued.`);
            }}
          />
          <button type="button" onClick={() => setRecovering(webhook)} disabled={!webhook.isActive}>
            Recover failed deliveries…
          </button>
        </div>
      </div>
      <WebhookHealthCard webhook={webhook} />
      <RecoverDialog webhook={recovering} onClose={() => setRecovering(null)} />

      <div className="toolbar">
        <div className="field-inline">
          <label htmlFor={filterId}>Status</label>
          <select
            id={filterId}
            value={status}
            onChange={(e) => {
              setStatus(e.target.value as WebhookDeliveryStatus | '');
              setPage(1);
            }}
          >
            <option value="">All</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <LiveIndicator />
      </div>

      <p className="hint">
        Attempts count from 0 again when a delivery is redelivered or recovered (a new round); the delivery’s own page lists every
        attempt of every round.
      </p>
      <p className="hint" role="status">
        {note}
      </p>
      <ErrorNotice error={redeliver.error} />
      <PagedTable
        log={withChanges(deliveries, changes, status)}
        page={page}
        loadingLabel="Loading deliveries…"
        empty={<p>{status ? `No ${status} deliveries.` : 'No deliveries yet. Send a test ping to see one arrive.'}</p>}
        tableClass="deliveries"
        caption="Deliveries, newest first"
        head={
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">
              Attempts <span className="th-note">this round</span>
            </th>
            <th scope="col">HTTP status</th>
            <th scope="col">Last error</th>
            <th scope="col">Created</th>
            <th scope="col">Delivered</th>
            <th scope="col">Next attempt</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        }
        rows={(items) => (
          <>
            {items.map((d) => (
              <tr
                key={d.id}
                data-delivery-id={d.id}
                data-status={d.status}
                // Two identical animations, alternated, so every update restarts the highlight.
                className={changed[d.id] ? (changed[d.id] % 2 ? 'flash-a' : 'flash-b') : undefined}
              >
                <th scope="row" data-label="Event">
                  <Link to={`/deliveries/${d.id}`} className="event-link">
                    <code>{d.event}</code>
                  </Link>
                </th>
                <td data-label="Status" data-testid="delivery-status">
                  <Badge tone={DELIVERY_STATUS_TONE[d.status]}>{d.status}</Badge>
                  {requeuedAt[d.id] && (
                    <span className="requeued" data-testid="delivery-requeued">
                      Queued again {formatTime(requeuedAt[d.id])}
                    </span>
                  )}
                </td>
                <td data-label="Attempts this round" data-testid="delivery-attempts">
                  {d.attempts}
                </td>
                <td data-label="HTTP status" data-testid="delivery-http">
                  {d.statusCode ?? '—'}
                </td>
                <td data-label="Last error" data-testid="delivery-error">
                  {d.lastError ?? '—'}
                </td>
                <td data-label="Created">{formatDateTime(d.createdAt)}</td>
                <td data-label="Delivered">{formatDateTime(d.deliveredAt)}</td>
                <td data-label="Next attempt">{formatDateTime(d.nextAttemptAt)}</td>
                <td className="actions-cell">
                  <Link to={`/deliveries/${d.id}`} className="button">
                    Details<span className="visually-hidden"> of {d.event}</span>
                  </Link>
                  {d.status !== 'PENDING' && (
                    <button type="button" onClick={() => redeliver.mutate(d)}>
                      Redeliver
                      <span className="visually-hidden">
                        {' '}
                        {d.event} of {formatDateTime(d.createdAt)}
                      </span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </>
        )}
        summary={(p, pages) => `Page ${p.page} of ${pages} · ${p.total} ${p.total === 1 ? 'delivery' : 'deliveries'}`}
        onPage={setPage}
      />
    </>
  );
}

/**
 * The page as read with the live changes it may not hold yet put over it (`upsert`: a row replaced, a
 * new delivery on top of page 1), oldest change first.
 */
function withChanges(
  log: Resource<StoredPage>,
  changes: ReadonlyMap<string, LiveChange>,
  filter: WebhookDeliveryStatus | '',
): Omit<Resource<Page<DeveloperDelivery>>, 'setData'> {
  const read = log.data;
  if (!read) return log;
  let shown: Page<DeveloperDelivery> = read;
  for (const change of changes.values()) {
    if (change.number > read.readAfter) shown = upsert(shown, change.delivery, filter);
  }
  return shown === read ? log : { ...log, data: shown };
}
