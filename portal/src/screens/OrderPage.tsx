/**
 * One order (GET /v1/developer/orders/{code}), reachable from wherever an order appears: its status and
 * timeline, where its courier is, its payment with every refund, and its proof (docs/portal.md, "The
 * order page"). The page follows the realtime channel: an order change, a tracking flush or a payment
 * change of this order reads it again. An order that is not one of the partner's keys' is said so;
 * an order of theirs with nothing yet in a part says so in that part.
 */
import type { DeveloperOrderView } from '@partner-logistics/sdk/types';
import { useEffect } from 'react';
import { developer } from '../client';
import { EnvironmentBadge, KeyName } from '../components/KeyBadges';
import { LiveIndicator } from '../components/LiveIndicator';
import { OrderPayment } from '../components/OrderPayment';
import { OrderProofView } from '../components/OrderProofView';
import { OrderTrackingView } from '../components/OrderTrackingView';
import { usePageTitle } from '../components/PageTitle';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { formatDateTime } from '../format';
import { useCoalesced } from '../hooks';
import { formatManat } from '../payments';
import { queryKeys, useApiQuery, useKeys } from '../query';
import { onReconnect, subscribe } from '../realtime';
import { Link } from '../router';
import './OrderPage.css';

/** Statuses whose order is done: nothing more will happen to it. */
const ENDED = new Set(['DELIVERED', 'CANCELLED', 'RETURNED']);

function Timeline({ order }: { order: DeveloperOrderView['order'] }) {
  return (
    <section className="section" aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">Timeline</h2>
      <ol className="timeline" data-testid="order-timeline">
        {order.timeline.map((step, i) => (
          <li key={`${step.status}-${step.at}`} data-status={step.status}>
            <span className="mono">{step.status}</span> <span className="hint">{formatDateTime(step.at)}</span>
            {i === order.timeline.length - 1 && <span className="visually-hidden"> (now)</span>}
          </li>
        ))}
      </ol>
    </section>
  );
}

export function OrderPage({ code }: { code: string }) {
  usePageTitle(`Order ${code}`);
  const view = useApiQuery(
    queryKeys.order(code),
    () => developer.GET('/v1/developer/orders/{code}', { params: { path: { code } } }),
    { live: true },
  );
  const keys = useKeys();
  const { reload } = view;
  const readAgain = useCoalesced(() => void reload(), 500);
  useEffect(() => {
    const offs = [
      subscribe('order.updated', ({ order }) => order.code === code && readAgain()),
      subscribe('order.tracking', ({ tracking }) => tracking.orderCode === code && readAgain()),
      subscribe('payment_intent.updated', ({ paymentIntent }) => paymentIntent.orderCode === code && readAgain()),
      onReconnect(() => void reload()),
    ];
    return () => {
      for (const off of offs) off();
    };
  }, [code, readAgain, reload]);

  if (view.error && !view.data) {
    if (view.error.status === 404) {
      return (
        <>
          <h1 tabIndex={-1}>
            Order <code>{code}</code> is not one of your keys’ orders
          </h1>
          <Empty>
            <p data-testid="order-not-yours">
              No order with this code is assigned to a key of your account. Check the code, or find the order in the{' '}
              <Link to="/sandbox">sandbox</Link>, the <Link to="/requests">request log</Link> or{' '}
              <Link to="/payments">payments</Link>.
            </p>
          </Empty>
        </>
      );
    }
    return <LoadError error={view.error} onRetry={() => void reload()} />;
  }
  const v = view.data;
  if (!v) return <Loading label={`Loading order ${code}…`} />;
  const { order } = v;
  const key = keys.data?.find((k) => k.id === v.apiKeyId);
  return (
    <>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>
            Order <code>{order.code}</code>
          </h1>
          <p className="meta" data-testid="order-status">
            <Badge tone={order.status === 'DELIVERED' ? 'ok' : ENDED.has(order.status) ? 'muted' : 'warn'}>{order.status}</Badge>{' '}
            <EnvironmentBadge environment={v.environment === 'live' ? 'LIVE' : 'SANDBOX'} /> Key{' '}
            <KeyName apiKey={key} environment="" />
          </p>
          <p className="hint">
            {order.paymentMethod === 'COD'
              ? `Cash on delivery, ${formatManat(order.codAmountQepik)} at the door`
              : 'Card payment'}{' '}
            · total {formatManat(order.totalQepik)} · updated {formatDateTime(order.updatedAt)}
          </p>
        </div>
        <LiveIndicator live="Live: this page updates as the order moves" />
      </div>
      <Timeline order={order} />
      <OrderTrackingView tracking={v.tracking} />
      <OrderPayment intent={v.paymentIntent} refunds={v.refunds} />
      <OrderProofView proof={v.proof} status={order.status} />
    </>
  );
}
