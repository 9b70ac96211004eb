/**
 * Offers (docs/portal.md, "Offers"): the orders the marketplace offers to the partner's keys before they
 * are theirs. Pending offers with the time each has left (accept or decline for sandbox keys), then the
 * history of every offer, newest first. The page follows the realtime channel: a new, expired or
 * withdrawn offer reads both lists again; so does a deadline passing on this page.
 */
import { useEffect, useRef, useState } from 'react';
import { developer } from '../client';
import { DeclineOfferDialog } from '../components/DeclineOfferDialog';
import { EnvironmentBadge } from '../components/KeyBadges';
import { LiveIndicator } from '../components/LiveIndicator';
import { PagedTable } from '../components/PagedTable';
import { usePageTitle } from '../components/PageTitle';
import { PendingOffer } from '../components/PendingOffer';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { formatNumber, formatShortDateTime } from '../format';
import { useCoalesced } from '../hooks';
import { OFFER_STATUS_LABEL, OFFER_STATUS_TONE, type Offer, REASON_LABEL, timeLeft, useNow } from '../offers';
import { invalidate, queryKeys, useApiQuery, useKeys } from '../query';
import { onReconnect, subscribe } from '../realtime';
import { Link } from '../router';
import './Offers.css';

const PAGE_SIZE = 20;

/** Both lists read again when the channel says an offer changed, or after a reconnect (a burst reads once). */
function useLiveOffers(): () => void {
  const readAgain = useCoalesced(() => void invalidate(queryKeys.offers), 300);
  useEffect(() => {
    const offs = [
      subscribe('offer.created', readAgain),
      subscribe('offer.expired', readAgain),
      subscribe('offer.withdrawn', readAgain),
      onReconnect(readAgain),
    ];
    return () => {
      for (const off of offs) off();
    };
  }, [readAgain]);
  return readAgain;
}

export function Offers() {
  usePageTitle('Offers');
  const readAgain = useLiveOffers();
  const keys = useKeys();
  const keyOf = (id: string) => keys.data?.find((k) => k.id === id);
  const now = useNow();
  const [declining, setDeclining] = useState<Offer | null>(null);
  const [page, setPage] = useState(1);
  const pending = useApiQuery(
    [...queryKeys.offers, 'PENDING'],
    () => developer.GET('/v1/developer/offers', { params: { query: { status: 'PENDING', pageSize: 50 } } }),
    { live: true },
  );
  const history = useApiQuery(
    [...queryKeys.offers, 'all', page],
    () => developer.GET('/v1/developer/offers', { params: { query: { page, pageSize: PAGE_SIZE } } }),
    { live: true },
  );

  // An offer past its deadline reads as EXPIRED at once: read again when one passes here.
  const passed = useRef(new Set<string>());
  useEffect(() => {
    for (const offer of pending.data?.items ?? []) {
      if (!timeLeft(offer.expiresAt, now) && !passed.current.has(offer.id)) {
        passed.current.add(offer.id);
        readAgain();
      }
    }
  }, [now, pending.data, readAgain]);

  const open = pending.data?.items ?? [];
  return (
    <>
      <h1 tabIndex={-1}>Offers</h1>
      <p className="lead">
        The marketplace may offer an order to one of your keys before it is yours. Accept it and the order is assigned to the key;
        decline it with a reason and it goes elsewhere. An offer not answered by its deadline expires.
      </p>
      <LiveIndicator live="Live: new offers appear as they are made" />
      <section className="section" aria-labelledby="pending-heading">
        <h2 id="pending-heading">Pending{pending.data ? ` (${formatNumber(pending.data.total)})` : ''}</h2>
        {pending.error && !pending.data && <LoadError error={pending.error} onRetry={() => void pending.reload()} />}
        {!pending.data && pending.loading && <Loading label="Loading offers…" />}
        {pending.data && open.length === 0 && (
          <Empty>
            <p>
              No offers waiting. In the sandbox, make some with <code>POST /v1/partner/sandbox/offers</code> and a sandbox key (
              <Link to="/docs">calling the API</Link>).
            </p>
          </Empty>
        )}
        {open.length > 0 && (
          <ul className="offers">
            {open.map((offer) => (
              <PendingOffer
                key={offer.id}
                offer={offer}
                apiKey={keyOf(offer.apiKeyId)}
                now={now}
                onDecline={setDeclining}
                onChanged={readAgain}
              />
            ))}
          </ul>
        )}
      </section>
      <section className="section" aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        <PagedTable
          log={history}
          page={page}
          loadingLabel="Loading the history…"
          empty={<p>No offers yet.</p>}
          tableClass="offer-history"
          caption="Every offer made to your keys, newest first"
          head={
            <tr>
              <th scope="col">Order</th>
              <th scope="col">Key</th>
              <th scope="col">Status</th>
              <th scope="col">Offered</th>
              <th scope="col">Decided</th>
              <th scope="col">Reason</th>
            </tr>
          }
          rows={(items) =>
            items.map((offer) => {
              const key = keyOf(offer.apiKeyId);
              return (
                <tr key={offer.id} data-offer-id={offer.id} data-status={offer.status}>
                  <td data-label="Order">
                    {offer.status === 'ACCEPTED' ? (
                      <Link to={`/orders/${encodeURIComponent(offer.orderCode)}`}>{offer.orderCode}</Link>
                    ) : (
                      <span className="mono">{offer.orderCode}</span>
                    )}
                  </td>
                  <td data-label="Key">
                    {key ? key.name : '—'} {key && <EnvironmentBadge environment={key.environment} />}
                  </td>
                  <td data-label="Status">
                    <Badge tone={OFFER_STATUS_TONE[offer.status]}>{OFFER_STATUS_LABEL[offer.status]}</Badge>
                  </td>
                  <td data-label="Offered">{formatShortDateTime(offer.createdAt)}</td>
                  <td data-label="Decided">{formatShortDateTime(offer.decidedAt)}</td>
                  <td data-label="Reason">
                    {offer.declineReason ? REASON_LABEL[offer.declineReason] : '—'}
                    {offer.note && <span className="hint offer-note"> “{offer.note}”</span>}
                  </td>
                </tr>
              );
            })
          }
          summary={(p, pages) => `Page ${p.page} of ${pages} (${formatNumber(p.total)} offers)`}
          onPage={setPage}
        />
      </section>
      <DeclineOfferDialog offer={declining} onClose={() => setDeclining(null)} onDeclined={readAgain} />
    </>
  );
}
