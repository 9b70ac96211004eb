/**
 * One delivery, in full (GET /v1/developer/deliveries/{id}): the payload exactly as signed, pretty-
 * printed, and every attempt, oldest first, with every header its request carried (GET …/request-headers:
 * the Standard Webhooks ones and User-Agent too), what the endpoint answered (status, headers, the first
 * 4 KiB of its body) and how long it took, and a link to the order it is about. It follows the realtime
 * channel: when the delivery moves ('delivery.updated'), the attempts are read again.
 */

import type { DeliveryAttempt } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { useEffect } from 'react';
import { developer } from '../client';
import { CodeBlock } from '../components/CodeBlock';
import { ErrorNotice } from '../components/ErrorNotice';
import { usePageTitle } from '../components/PageTitle';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { DELIVERY_STATUS_TONE } from '../delivery-log';
import { formatDateTime, formatNumber, formatTime } from '../format';
import { invalidate, queryKeys, useApiQuery } from '../query';
import { onReconnect } from '../realtime';
import { Link } from '../router';

/** The payload as sent, indented for reading (the bytes signed are the compact text). */
function pretty(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}

function Headers({ headers, caption }: { headers: Record<string, string>; caption: string }) {
  const entries = Object.entries(headers);
  return (
    <table className="table headers">
      <caption>{caption}</caption>
      <tbody>
        {entries.map(([name, value]) => (
          <tr key={name}>
            <th scope="row" className="mono">
              {name}
            </th>
            <td className="mono">{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The order a delivery is about (`data.order`, `data.paymentIntent` or `data.tracking`); null for other
 * events (an offer's `data` is the offer, whose order is not the partner's until accepted) and for test
 * samples, whose orders are made up.
 */
function orderCodeOf(payload: string): string | null {
  try {
    const body = JSON.parse(payload) as {
      id?: string;
      type?: string;
      data?: { order?: { code?: string }; paymentIntent?: { orderCode?: string }; tracking?: { orderCode?: string } };
    };
    if (body.id?.startsWith('evt_test_') || body.type?.startsWith('offer.')) return null;
    return body.data?.order?.code ?? body.data?.paymentIntent?.orderCode ?? body.data?.tracking?.orderCode ?? null;
  } catch {
    return null;
  }
}

/** `sent`: every header of the attempt's request (GET …/request-headers); the detail's own list until it is in. */
function Attempt({ attempt, sent }: { attempt: DeliveryAttempt; sent: Record<string, string> | undefined }) {
  const ok = attempt.error === null;
  return (
    <li className="card attempt" data-attempt={attempt.number} data-testid="attempt">
      <h3>
        Attempt {attempt.number} <Badge tone={ok ? 'ok' : 'warn'}>{ok ? 'Accepted' : 'Failed'}</Badge>
      </h3>
      <p className="meta">
        {formatTime(attempt.at)} · <span data-testid="attempt-duration">{formatNumber(attempt.durationMs)} ms</span> ·{' '}
        <span data-testid="attempt-status">
          {attempt.statusCode === null ? 'no answer' : `HTTP ${attempt.statusCode}`}
          {attempt.error && attempt.error !== `HTTP ${attempt.statusCode}` ? ` · ${attempt.error}` : ''}
        </span>
      </p>
      <Headers headers={sent ?? attempt.requestHeaders} caption="Request headers as sent" />
      {attempt.responseHeaders === null ? (
        <p className="hint">The endpoint did not answer ({attempt.error}).</p>
      ) : (
        <>
          <Headers headers={attempt.responseHeaders} caption="Response headers" />
          <CodeBlock
            label={`Response body${(attempt.responseBody?.length ?? 0) >= 4096 ? ' (first 4 KiB)' : ''}`}
            code={attempt.responseBody === '' || attempt.responseBody === null ? '(empty)' : attempt.responseBody}
          />
        </>
      )}
    </li>
  );
}

export function DeliveryDetail({ deliveryId }: { deliveryId: string }) {
  usePageTitle('Delivery');
  const detail = useApiQuery(queryKeys.delivery(deliveryId), () => developer.deliveries.get(deliveryId), { live: true });
  // Every header each attempt sent; read with the detail, and again whenever it changes (same key prefix).
  const sentHeaders = useApiQuery(
    queryKeys.deliveryHeaders(deliveryId),
    () => developer.GET('/v1/developer/deliveries/{id}/request-headers', { params: { path: { id: deliveryId } } }),
    { live: true },
  );
  const { reload } = detail;
  useEffect(() => onReconnect(() => void reload()), [reload]);
  const redeliver = useMutation({
    mutationFn: () => developer.deliveries.redeliver(deliveryId),
    onSuccess: () => invalidate(queryKeys.delivery(deliveryId)),
  });

  if (detail.error && !detail.data) {
    if (detail.error.status === 404) {
      return (
        <>
          <h1 tabIndex={-1}>Delivery not found</h1>
          <Empty>
            <p>
              This delivery does not exist (deliveries are kept 35 days, and go with their webhook). Back to{' '}
              <Link to="/webhooks">webhooks</Link>.
            </p>
          </Empty>
        </>
      );
    }
    return <LoadError error={detail.error} onRetry={() => void reload()} />;
  }
  const d = detail.data;
  if (!d) return <Loading label="Loading delivery…" />;
  const attempts = [...d.attempts].reverse();
  const sentBy = new Map((sentHeaders.data?.attempts ?? []).map((a) => [a.number, a.headers]));
  const orderCode = orderCodeOf(d.payload);
  return (
    <>
      <p className="breadcrumb">
        <Link to="/webhooks">Webhooks</Link> / <Link to={`/webhooks/${d.webhookId}`}>Delivery log</Link> / Delivery
      </p>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1} className="detail-title">
            <code>{d.event}</code> delivery
          </h1>
          <p className="meta" data-testid="detail-status" data-status={d.status}>
            <Badge tone={DELIVERY_STATUS_TONE[d.status]}>{d.status}</Badge> Created {formatDateTime(d.createdAt)}
            {d.deliveredAt && ` · delivered ${formatDateTime(d.deliveredAt)}`}
            {d.nextAttemptAt && ` · next attempt ${formatDateTime(d.nextAttemptAt)}`}
          </p>
          <p className="hint mono detail-id">{d.id}</p>
          {orderCode && (
            <p className="hint">
              About order{' '}
              <Link to={`/orders/${encodeURIComponent(orderCode)}`} className="mono" data-testid="delivery-order-link">
                {orderCode}
              </Link>
            </p>
          )}
        </div>
        {d.status !== 'PENDING' && (
          <button type="button" className="primary" onClick={() => redeliver.mutate()} disabled={redeliver.isPending}>
            {redeliver.isPending ? 'Queuing…' : 'Redeliver'}
          </button>
        )}
      </div>
      <ErrorNotice error={redeliver.error} />
      <section className="section payload" aria-labelledby="payload-heading">
        <h2 id="payload-heading">Payload</h2>
        <p className="hint">
          The body exactly as sent and signed is the compact JSON text; shown here indented. Verify signatures against the raw
          body your endpoint received.
        </p>
        <CodeBlock label="Payload (JSON)" code={pretty(d.payload)} />
      </section>
      <section className="section" aria-labelledby="attempts-heading">
        <h2 id="attempts-heading">
          Attempt history <span className="muted">({d.attempts.length} in all rounds, newest first)</span>
        </h2>
        <p className="hint">
          A redeliver or a recovery starts a new round: the delivery log counts the attempts of the current round, this list keeps
          every attempt, numbered over the delivery’s whole life.
        </p>
        {d.attempts.length === 0 ? (
          <p className="empty-inline">{d.status === 'PENDING' ? 'Being sent now…' : 'No attempt yet.'}</p>
        ) : (
          <ol className="attempts" reversed>
            {attempts.map((a) => (
              <Attempt key={a.number} attempt={a} sent={sentBy.get(a.number)} />
            ))}
          </ol>
        )}
      </section>
    </>
  );
}
