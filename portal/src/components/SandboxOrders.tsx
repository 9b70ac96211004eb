/**
 * A sandbox key's test orders and van batches, each with the marketplace moves the API says its status
 * allows (nothing here decides them), and the van batch made of the ticked orders.
 */
import type { OrderStatus, SandboxBatch, SandboxOrder } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { developer } from '../client';
import { useClearedOnSuccess } from '../hooks';
import { formatManat } from '../payments';
import { Link } from '../router';
import { ErrorNotice } from './ErrorNotice';
import { Badge } from './States';
import './sandbox.css';

/** How each marketplace move reads on its button: the status it moves the order to. */
const MOVE_LABELS: Record<OrderStatus, string> = {
  PLACED: 'Place',
  VENDOR_ACCEPTED: 'Vendor accepts',
  RUNNER_PICKUP: 'Runner picks up',
  AT_HUB: 'Arrives at the hub',
  PACKED: 'Packed at the hub',
  SCANNED_TO_VAN: 'Scan onto a van',
  EN_ROUTE: 'Out for delivery',
  DELIVERED: 'Delivered',
  FAILED: 'Delivery failed',
  RETURNED: 'Return to sender',
  CANCELLED: 'Cancel order',
};

type BatchStatus = SandboxBatch['status'];

const BATCH_LABELS: Record<BatchStatus, string> = {
  OPEN: 'Reopen',
  DISPATCHED: 'Dispatch the van',
  COMPLETED: 'Complete the batch',
};

const FINAL: OrderStatus[] = ['DELIVERED', 'RETURNED', 'CANCELLED'];

/** What an order's cash asks of the courier in its status: to collect, collected, or nothing any more. */
function cashLine(order: { paymentMethod: string; status: OrderStatus; codAmountQepik: number }): string {
  if (order.paymentMethod !== 'COD') return 'Card, paid online: nothing to collect';
  if (order.status === 'DELIVERED') return 'Cash on delivery: collected at the door (its page shows how much)';
  if (order.status === 'CANCELLED' || order.status === 'RETURNED') return 'Cash on delivery: nothing to collect any more';
  return `Cash on delivery: ${formatManat(order.codAmountQepik)} to collect`;
}

/** A marketplace move of an order or a batch: its label, and what it moves for screen readers. */
function MoveButton(props: { to: string; label: string; of: string; disabled: boolean; danger?: boolean; onClick: () => void }) {
  return (
    <button
      type="button"
      data-move={props.to}
      title={`Moves ${props.of} to ${props.to}`}
      disabled={props.disabled}
      className={props.danger ? 'danger' : undefined}
      onClick={props.onClick}
    >
      {props.label}
      <span className="visually-hidden"> {props.of}</span>
    </button>
  );
}

/** An order's or batch's card heading: its code (an order's links to its page) and its status. */
function CardHead({
  code,
  status,
  tone,
  href,
}: {
  code: string;
  status: string;
  tone: Parameters<typeof Badge>[0]['tone'];
  href?: string;
}) {
  return (
    <div className="sandbox-order-head">
      <h3>
        {href ? (
          <Link to={href}>
            <code>{code}</code>
          </Link>
        ) : (
          <code>{code}</code>
        )}
      </h3>
      <Badge tone={tone}>{status}</Badge>
    </div>
  );
}

function statusTone(status: OrderStatus): 'ok' | 'bad' | 'muted' | 'warn' {
  if (status === 'DELIVERED') return 'ok';
  if (status === 'FAILED') return 'warn';
  if (status === 'CANCELLED' || status === 'RETURNED') return 'bad';
  return 'muted';
}

export function Orders({
  keyId,
  orders,
  batches,
  onChanged,
  succeeded,
}: {
  keyId: string;
  orders: SandboxOrder[];
  batches: SandboxBatch[];
  onChanged: () => void;
  succeeded: number;
}) {
  const [selected, setSelected] = useState<string[]>([]);
  const move = useMutation({
    mutationFn: ({ code, status }: { code: string; status: OrderStatus }) =>
      developer.POST('/v1/developer/keys/{id}/sandbox/orders/{code}/platform-status', {
        params: { path: { id: keyId, code } },
        body: { status },
      }),
    onSuccess: onChanged,
  });
  const batch = useMutation({
    mutationFn: (orderCodes: string[]) =>
      developer.POST('/v1/developer/keys/{id}/sandbox/batches', { params: { path: { id: keyId } }, body: { orderCodes } }),
    onSuccess: () => {
      setSelected([]);
      onChanged();
    },
  });
  const moveBatch = useMutation({
    mutationFn: ({ code, status }: { code: string; status: BatchStatus }) =>
      developer.POST('/v1/developer/keys/{id}/sandbox/batches/{code}/status', {
        params: { path: { id: keyId, code } },
        body: { status },
      }),
    onSuccess: onChanged,
  });
  const error = move.error ?? batch.error ?? moveBatch.error;
  useClearedOnSuccess(succeeded, () => {
    move.reset();
    batch.reset();
    moveBatch.reset();
  });
  const busy = move.isPending || batch.isPending || moveBatch.isPending;

  // An order on an OPEN or DISPATCHED batch cannot join another; a finished order has nothing to ship.
  const batchable = (o: SandboxOrder) =>
    !FINAL.includes(o.order.status) && !(o.order.batch && o.order.batch.status !== 'COMPLETED');
  const chosen = selected.filter((code) => orders.some((o) => o.order.code === code && batchable(o)));

  return (
    <>
      <section className="section" aria-labelledby="orders-heading">
        <div className="section-head">
          <h2 id="orders-heading">Test orders</h2>
          <button type="button" disabled={chosen.length === 0 || busy} onClick={() => batch.mutate(chosen)}>
            {chosen.length === 0
              ? 'Put ticked orders on a van batch'
              : `Put ${chosen.length === 1 ? '1 order' : `${chosen.length} orders`} on a van batch`}
          </button>
        </div>
        <ErrorNotice error={error} />
        {orders.length === 0 ? (
          <p className="empty-inline">No test orders for this key yet. Create some above.</p>
        ) : (
          <ul className="sandbox-orders">
            {orders.map((entry) => {
              const { order } = entry;
              return (
                <li key={order.code} className="card sandbox-order" data-order-code={order.code} data-status={order.status}>
                  <CardHead
                    code={order.code}
                    status={order.status}
                    tone={statusTone(order.status)}
                    href={`/orders/${encodeURIComponent(order.code)}`}
                  />
                  <p className="hint">
                    {cashLine(order)}
                    {order.customer === null ? ' · no customer' : ''}
                    {order.batch ? ` · van batch ${order.batch.code} (${order.batch.status})` : ''}
                  </p>
                  <p className="hint" data-testid="partner-events">
                    {entry.partnerEvents.length > 0
                      ? `Your system may send now: ${entry.partnerEvents.join(', ')}.`
                      : 'Nothing for your system to send in this status.'}
                  </p>
                  {entry.platformMoves.length > 0 && (
                    <fieldset className="sandbox-moves">
                      <legend>Move it as the marketplace</legend>
                      <div className="actions">
                        {entry.platformMoves.map((to) => (
                          <MoveButton
                            key={to}
                            to={to}
                            label={MOVE_LABELS[to]}
                            of={order.code}
                            disabled={busy}
                            danger={to === 'CANCELLED'}
                            onClick={() => move.mutate({ code: order.code, status: to })}
                          />
                        ))}
                      </div>
                    </fieldset>
                  )}
                  {batchable(entry) && (
                    <label className="option">
                      <input
                        type="checkbox"
                        checked={selected.includes(order.code)}
                        onChange={(e) =>
                          setSelected((s) => (e.target.checked ? [...s, order.code] : s.filter((c) => c !== order.code)))
                        }
                      />
                      Add to a van batch<span className="visually-hidden"> {order.code}</span>
                    </label>
                  )}
                </li>
              );
            })}
          </ul>
        )}
      </section>

      <section className="section" aria-labelledby="batches-heading">
        <h2 id="batches-heading">Van batches</h2>
        {batches.length === 0 ? (
          <p className="empty-inline">No van batches yet. Tick orders above and put them on a van batch.</p>
        ) : (
          <ul className="sandbox-orders">
            {batches.map((b) => (
              <li key={b.code} className="card sandbox-order" data-batch-code={b.code} data-status={b.status}>
                <CardHead code={b.code} status={b.status} tone={b.status === 'COMPLETED' ? 'ok' : 'muted'} />
                <p className="hint">Orders: {b.orderCodes.join(', ')}</p>
                {b.moves.length > 0 && (
                  <div className="actions">
                    {b.moves.map((to) => (
                      <MoveButton
                        key={to}
                        to={to}
                        label={BATCH_LABELS[to]}
                        of={b.code}
                        disabled={busy}
                        onClick={() => moveBatch.mutate({ code: b.code, status: to })}
                      />
                    ))}
                  </div>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
