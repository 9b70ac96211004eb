/**
 * One pending offer: what the order is (never who the customer is or their street: an offer shows only
 * enough to decide), the time it has left, and for a sandbox key Accept and Decline. A live offer is
 * decided by the partner's own systems with its key, so the portal only shows it.
 */
import type { DeveloperKey } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { developer } from '../client';
import { formatShortDateTime } from '../format';
import { type Offer, timeLeft } from '../offers';
import { formatManat } from '../payments';
import { ErrorNotice } from './ErrorNotice';
import { EnvironmentBadge } from './KeyBadges';
import { Badge } from './States';

function paymentLine(order: Offer['order']): string {
  return order.paymentMethod === 'COD'
    ? `Cash on delivery: ${formatManat(order.codAmountQepik)} to collect`
    : `Card, paid online: ${formatManat(order.totalQepik)}`;
}

function placeLine(order: Offer['order']): string {
  const where = [order.zone?.name.en, order.area].filter(Boolean).join(', ') || 'No area given';
  const point = order.dropoff ? ` · drop-off near ${order.dropoff.lat.toFixed(2)}, ${order.dropoff.lng.toFixed(2)}` : '';
  return `${where}${point}`;
}

function windowLine(order: Offer['order']): string {
  if (!order.timeWindowStart && !order.timeWindowEnd) return 'No delivery window';
  return `Deliver ${formatShortDateTime(order.timeWindowStart)} – ${formatShortDateTime(order.timeWindowEnd)}`;
}

export function PendingOffer({
  offer,
  apiKey,
  now,
  onDecline,
  onChanged,
}: {
  offer: Offer;
  apiKey: DeveloperKey | undefined;
  now: number;
  onDecline: (offer: Offer) => void;
  onChanged: () => void;
}) {
  const accept = useMutation({
    mutationFn: () => developer.POST('/v1/developer/offers/{id}/accept', { params: { path: { id: offer.id } } }),
    onSuccess: onChanged,
  });
  const left = timeLeft(offer.expiresAt, now);
  const sandbox = apiKey?.environment === 'SANDBOX';
  const items = offer.order.items.reduce((n, i) => n + i.qty, 0);
  return (
    <li className="card offer" data-offer-id={offer.id} data-order-code={offer.orderCode}>
      <div className="offer-head">
        <h3>{offer.orderCode}</h3>
        <Badge tone={left ? 'warn' : 'muted'}>{left ? 'Pending' : 'Deadline passed'}</Badge>
        <span className="offer-left" data-testid="time-left">
          {left ?? `Closed at ${formatShortDateTime(offer.expiresAt)}`}
        </span>
      </div>
      <p className="hint">
        For {apiKey ? apiKey.name : 'a key'} {apiKey && <EnvironmentBadge environment={apiKey.environment} />} · answer by{' '}
        {formatShortDateTime(offer.expiresAt)}
      </p>
      <ul className="offer-facts">
        <li>{paymentLine(offer.order)}</li>
        <li>
          {items} {items === 1 ? 'item' : 'items'}, order total {formatManat(offer.order.totalQepik)}
        </li>
        <li>{placeLine(offer.order)}</li>
        <li>{windowLine(offer.order)}</li>
      </ul>
      {sandbox ? (
        <div className="actions">
          <button type="button" className="primary" disabled={!left || accept.isPending} onClick={() => accept.mutate()}>
            {accept.isPending ? 'Accepting…' : 'Accept'}
            <span className="visually-hidden"> {offer.orderCode}</span>
          </button>
          <button type="button" disabled={!left || accept.isPending} onClick={() => onDecline(offer)}>
            Decline…<span className="visually-hidden"> {offer.orderCode}</span>
          </button>
        </div>
      ) : (
        <p className="hint">
          A live offer is decided by your systems with the key (<code>POST /v1/partner/offers/{'{id}'}/accept</code> or{' '}
          <code>…/decline</code>).
        </p>
      )}
      <ErrorNotice error={accept.error} title="Could not accept." />
    </li>
  );
}
