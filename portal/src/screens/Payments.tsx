/**
 * Payments (docs/payments.md, "Developer portal reads"): for live or sandbox, the cash the partner's
 * couriers hold (collected, on no statement yet), what its statements still await, and the statements
 * with their status. Amounts are integer qəpik shown in manat (formatManat).
 */

import type { ApiKeyEnvironment } from '@partner-logistics/sdk/types';
import { useId, useState } from 'react';
import { developer } from '../client';
import { Pager } from '../components/Pager';
import { usePageTitle } from '../components/PageTitle';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { formatDateTime, formatNumber, formatShortDateTime } from '../format';
import { formatManat, SETTLEMENT_STATUS_LABEL, SETTLEMENT_STATUS_TONE } from '../payments';
import { queryKeys, useApiQuery } from '../query';
import { Link, navigate, useSearchParam } from '../router';
import './Payments.css';

const PAGE_SIZE = 20;

/** The environment the page shows, kept in the address (?environment=sandbox) so links come back to it. */
export function usePaymentsEnvironment(): ApiKeyEnvironment {
  return useSearchParam('environment') === 'sandbox' ? 'SANDBOX' : 'LIVE';
}

function EnvironmentSwitch({ value }: { value: ApiKeyEnvironment }) {
  const name = useId();
  const options: Array<[ApiKeyEnvironment, string]> = [
    ['LIVE', 'Live'],
    ['SANDBOX', 'Sandbox'],
  ];
  return (
    <fieldset className="segmented payments-switch">
      <legend className="visually-hidden">Environment</legend>
      {options.map(([env, label]) => (
        <label key={env}>
          <input
            type="radio"
            name={name}
            value={env}
            checked={value === env}
            onChange={() => navigate(env === 'SANDBOX' ? '/payments?environment=sandbox' : '/payments', { replace: true })}
          />
          <span>{label}</span>
        </label>
      ))}
    </fieldset>
  );
}

function Balance({ environment }: { environment: ApiKeyEnvironment }) {
  const balance = useApiQuery(queryKeys.balance(environment), () =>
    developer.GET('/v1/developer/payments/balance', { params: { query: { environment } } }),
  );
  if (balance.error) return <LoadError error={balance.error} onRetry={() => void balance.reload()} />;
  const b = balance.data;
  if (!b) return <Loading label="Loading the balance…" />;
  return (
    <>
      <ul className="totals money-totals" data-testid="payments-balance">
        <li>
          <span className="total-value" data-testid="cash-on-hand">
            {formatManat(b.codOnHandQepik)}
          </span>
          <span className="total-label">Cash on hand</span>
        </li>
        <li>
          <span className="total-value">{formatNumber(b.collectionsOnHand)}</span>
          <span className="total-label">Collections on hand</span>
        </li>
        <li>
          <span className="total-value" data-testid="awaiting-remittance">
            {formatManat(b.awaitingRemittanceQepik)}
          </span>
          <span className="total-label">Awaiting remittance</span>
        </li>
      </ul>
      <p className="hint">
        Cash on hand is what your couriers collected at the door that is not on a statement yet
        {b.oldestCollectionOnHandAt ? ` (the oldest since ${formatDateTime(b.oldestCollectionOnHandAt)})` : ''}. Awaiting
        remittance is what your statements still ask you to pay to the marketplace.
      </p>
    </>
  );
}

function Settlements({ environment }: { environment: ApiKeyEnvironment }) {
  const [page, setPage] = useState(1);
  const list = useApiQuery([...queryKeys.settlements, environment, page], () =>
    developer.GET('/v1/developer/settlements', { params: { query: { environment, page, pageSize: PAGE_SIZE } } }),
  );
  if (list.error) return <LoadError error={list.error} onRetry={() => void list.reload()} />;
  const data = list.data;
  if (!data) return <Loading label="Loading statements…" />;
  if (data.total === 0) {
    return (
      <Empty>
        <p>No statements yet. The marketplace closes a period and sends you its statement of the cash collected.</p>
      </Empty>
    );
  }
  const pages = Math.max(1, Math.ceil(data.total / data.pageSize));
  const query = environment === 'SANDBOX' ? '?environment=sandbox' : '';
  return (
    <>
      <div className="table-wrap">
        <table className="table cards-on-phone" data-testid="settlements">
          <caption className="visually-hidden">Statements, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Period</th>
              <th scope="col">Status</th>
              <th scope="col">Collections</th>
              <th scope="col">Due</th>
              <th scope="col">Remitted</th>
              <th scope="col">Outstanding</th>
            </tr>
          </thead>
          <tbody>
            {data.items.map((s) => (
              <tr key={s.id} data-settlement-id={s.id}>
                <th scope="row" data-label="Period">
                  <Link to={`/payments/settlements/${encodeURIComponent(s.id)}${query}`}>
                    {formatShortDateTime(s.periodStart)} – {formatShortDateTime(s.periodEnd)}
                  </Link>
                </th>
                <td data-label="Status" className="status-cell">
                  <Badge tone={SETTLEMENT_STATUS_TONE[s.status]}>{SETTLEMENT_STATUS_LABEL[s.status]}</Badge>
                </td>
                <td data-label="Collections">{formatNumber(s.collectionsCount)}</td>
                <td data-label="Due">{formatManat(s.dueQepik)}</td>
                <td data-label="Remitted">{formatManat(s.remittedQepik)}</td>
                <td data-label="Outstanding">{formatManat(s.outstandingQepik)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {pages > 1 && (
        <Pager page={page} pages={pages} summary={`Page ${page} of ${pages} (${data.total} statements)`} onPage={setPage} />
      )}
    </>
  );
}

export function Payments() {
  usePageTitle('Payments');
  const environment = usePaymentsEnvironment();
  return (
    <>
      <div className="page-head">
        <h1 tabIndex={-1}>Payments</h1>
        <EnvironmentSwitch value={environment} />
      </div>
      <p className="lead">
        Cash your couriers collect on delivery is owed to the marketplace. Each statement lists the collections of a period and
        what you remitted for them.
      </p>
      <section aria-labelledby="balance-heading" className="section">
        <h2 id="balance-heading">Balance</h2>
        <Balance key={environment} environment={environment} />
      </section>
      <section aria-labelledby="statements-heading" className="section">
        <h2 id="statements-heading">Statements</h2>
        <Settlements key={environment} environment={environment} />
      </section>
    </>
  );
}
