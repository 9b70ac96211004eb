/**
 * The partner's payment intents of one environment (GET /v1/developer/payment-intents), newest first,
 * with the partner API's filters (status, method, order code, updated since) and a pager; each row opens
 * its order's page. Live: the Payments page reads it again on the realtime channel.
 */
import type { ApiKeyEnvironment, PaymentIntent } from '@partner-logistics/sdk/types';
import { useId, useState } from 'react';
import { developer } from '../client';
import { formatDateTime, localTimeZone } from '../format';
import { formatManat, INTENT_STATUS_LABEL } from '../payments';
import { queryKeys, useApiQuery } from '../query';
import { Link } from '../router';
import { Pager } from './Pager';
import { Empty, LoadError, Loading } from './States';

const PAGE_SIZE = 20;
const STATUSES = Object.keys(INTENT_STATUS_LABEL) as Array<PaymentIntent['status']>;

interface Filters {
  status: PaymentIntent['status'] | '';
  method: PaymentIntent['method'] | '';
  orderCode: string;
  /** A datetime-local value (the browser's time); '' for none. */
  updatedSince: string;
}

const NO_FILTERS: Filters = { status: '', method: '', orderCode: '', updatedSince: '' };

function FilterBar({ filters, onChange }: { filters: Filters; onChange: (f: Filters) => void }) {
  const id = useId();
  const set = (patch: Partial<Filters>) => onChange({ ...filters, ...patch });
  return (
    <form className="filters intent-filters" onSubmit={(e) => e.preventDefault()} aria-label="Payment intent filters">
      <div>
        <label htmlFor={`${id}-status`}>Status</label>
        <select id={`${id}-status`} value={filters.status} onChange={(e) => set({ status: e.target.value as Filters['status'] })}>
          <option value="">Any</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {INTENT_STATUS_LABEL[s]}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-method`}>Method</label>
        <select id={`${id}-method`} value={filters.method} onChange={(e) => set({ method: e.target.value as Filters['method'] })}>
          <option value="">Any</option>
          <option value="CARD">Card</option>
          <option value="COD">Cash on delivery</option>
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-code`}>Order code</label>
        <input
          id={`${id}-code`}
          className="mono"
          value={filters.orderCode}
          onChange={(e) => set({ orderCode: e.target.value.trim() })}
          placeholder="ORD-…"
        />
      </div>
      <div>
        <label htmlFor={`${id}-since`}>Updated since ({localTimeZone()})</label>
        <input
          id={`${id}-since`}
          type="datetime-local"
          value={filters.updatedSince}
          onChange={(e) => set({ updatedSince: e.target.value })}
        />
      </div>
    </form>
  );
}

export function PaymentIntentsList({ environment }: { environment: ApiKeyEnvironment }) {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [page, setPage] = useState(1);
  const query = {
    environment,
    page,
    pageSize: PAGE_SIZE,
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.method ? { method: filters.method } : {}),
    ...(filters.orderCode ? { orderCode: filters.orderCode } : {}),
    ...(filters.updatedSince ? { updatedSince: new Date(filters.updatedSince).toISOString() } : {}),
  };
  const list = useApiQuery([...queryKeys.paymentIntents, query], () =>
    developer.GET('/v1/developer/payment-intents', { params: { query } }),
  );
  const data = list.data;
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);
  const pages = data ? Math.max(1, Math.ceil(data.total / data.pageSize)) : 1;
  return (
    <>
      <FilterBar
        filters={filters}
        onChange={(f) => {
          setFilters(f);
          setPage(1);
        }}
      />
      {list.error && <LoadError error={list.error} onRetry={() => void list.reload()} />}
      {!data && !list.error && <Loading label="Loading payment intents…" />}
      {data && data.total === 0 && (
        <Empty>
          <p>
            {filtered
              ? 'No payment intent matches these filters.'
              : 'No payment intents yet: every order assigned to one of your keys has one.'}
          </p>
        </Empty>
      )}
      {data && data.total > 0 && (
        <div className="table-wrap">
          <table className="table cards-on-phone" data-testid="payment-intents">
            <caption className="visually-hidden">Payment intents, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Order</th>
                <th scope="col">Method</th>
                <th scope="col">Status</th>
                <th scope="col">Amount</th>
                <th scope="col">Received</th>
                <th scope="col">Refunded</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((p) => (
                <tr key={p.id} data-intent-id={p.id} data-status={p.status}>
                  <th scope="row" data-label="Order">
                    <Link to={`/orders/${encodeURIComponent(p.orderCode)}`} className="mono">
                      {p.orderCode}
                    </Link>
                  </th>
                  <td data-label="Method">{p.method === 'COD' ? 'Cash' : 'Card'}</td>
                  <td data-label="Status" data-testid="intent-status">
                    {INTENT_STATUS_LABEL[p.status]}
                  </td>
                  <td data-label="Amount">{formatManat(p.amountQepik)}</td>
                  <td data-label="Received">{formatManat(p.amountReceivedQepik)}</td>
                  <td data-label="Refunded">{formatManat(p.amountRefundedQepik)}</td>
                  <td data-label="Updated">{formatDateTime(p.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && pages > 1 && (
        <Pager page={page} pages={pages} summary={`Page ${page} of ${pages} (${data.total} payment intents)`} onPage={setPage} />
      )}
    </>
  );
}
