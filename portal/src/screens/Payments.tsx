/**
 * Payments (docs/portal.md, "Payments"): for live or sandbox, the cash the partner's couriers hold
 * (collected, on no statement yet), what its statements still await, its credit when it over-remitted
 * a statement (carried to the next statement; shown only while there is one: docs/portal.md, "Money"),
 * the payment intents with the API's filters, and the statements with their status; in the sandbox,
 * closing the period. The page follows the realtime channel ('payment_intent.updated',
 * 'settlement.updated'). Amounts are integer qəpik shown in manat (formatManat).
 *
 * Which environment: the address's (?environment=live|sandbox) when it names one; else the one last
 * chosen here (kept in this browser); else the one that has money, live first.
 */

import type { ApiKeyEnvironment } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { developer, toApiError } from '../client';
import { ErrorNotice } from '../components/ErrorNotice';
import { LiveIndicator } from '../components/LiveIndicator';
import { Pager } from '../components/Pager';
import { usePageTitle } from '../components/PageTitle';
import { PaymentIntentsList } from '../components/PaymentIntentsList';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { formatDateTime, formatNumber, formatShortDateTime } from '../format';
import { useCoalesced } from '../hooks';
import { formatManat, SETTLEMENT_STATUS_LABEL, SETTLEMENT_STATUS_TONE } from '../payments';
import { invalidate, queryKeys, useApiQuery } from '../query';
import { onReconnect, subscribe } from '../realtime';
import { Link, navigate, useSearchParam } from '../router';
import './Payments.css';

const PAGE_SIZE = 20;
const REMEMBERED = 'portal.payments.environment';

function remembered(): ApiKeyEnvironment | null {
  const value = localStorage.getItem(REMEMBERED);
  return value === 'LIVE' || value === 'SANDBOX' ? value : null;
}

/**
 * The environment the page shows (see the top of the file); null while the environment with money is
 * being found out.
 */
function usePaymentsEnvironment(): ApiKeyEnvironment | null {
  const asked = useSearchParam('environment');
  const fromAddress = asked === 'sandbox' ? 'SANDBOX' : asked === 'live' ? 'LIVE' : null;
  const chosen = fromAddress ?? remembered();
  const withMoney = useApiQuery([...queryKeys.paymentIntents, 'with-money'], async (): Promise<ApiKeyEnvironment> => {
    const count = async (environment: ApiKeyEnvironment) =>
      (await developer.GET('/v1/developer/payment-intents', { params: { query: { environment, pageSize: 1 } } })).total;
    if ((await count('LIVE')) > 0) return 'LIVE';
    return (await count('SANDBOX')) > 0 ? 'SANDBOX' : 'LIVE';
  });
  if (chosen) return chosen;
  return withMoney.data ?? (withMoney.error ? 'LIVE' : null);
}

function choose(environment: ApiKeyEnvironment): void {
  localStorage.setItem(REMEMBERED, environment);
  navigate(`/payments?environment=${environment === 'SANDBOX' ? 'sandbox' : 'live'}`, { replace: true });
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
          <input type="radio" name={name} value={env} checked={value === env} onChange={() => choose(env)} />
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
        {b.creditQepik !== 0 && (
          <li className="total-credit">
            <span className="total-value" data-testid="credit">
              {formatManat(b.creditQepik)}
            </span>
            <span className="total-label">Credit, carried to your next statement</span>
          </li>
        )}
      </ul>
      <p className="hint">
        Cash on hand is what your couriers collected at the door that is not on a statement yet
        {b.oldestCollectionOnHandAt ? ` (the oldest since ${formatDateTime(b.oldestCollectionOnHandAt)})` : ''}. Awaiting
        remittance is what your statements still ask you to pay to the marketplace.
        {b.creditQepik !== 0 &&
          ` Credit is what you remitted beyond what your settled statements ask: your next statement takes it off what you owe, as an adjustment line.`}
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
        <p>
          {environment === 'SANDBOX'
            ? 'No statements yet. In the sandbox you close a period yourself: “Close the sandbox period now” above makes a statement of the cash collected so far.'
            : 'No statements yet. The marketplace closes a period and sends you its statement of the cash collected.'}
        </p>
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
                <td data-label="Outstanding">
                  {formatManat(s.outstandingQepik)}
                  {s.outstandingQepik < 0 && <span className="muted"> (overpaid)</span>}
                </td>
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

/** The sandbox's own way to close a period: a statement of the sandbox collections up to now. */
function CloseSandboxPeriod() {
  const [made, setMade] = useState<string | null>(null);
  const close = useMutation({
    mutationFn: () => developer.POST('/v1/developer/sandbox/settlements', { body: {} }),
    onSuccess: (s) => {
      setMade(
        s.collectionsCount === 0
          ? 'Period closed: no collections in it, so its statement is settled at once.'
          : `Period closed: a statement of ${formatNumber(s.collectionsCount)} ${s.collectionsCount === 1 ? 'collection' : 'collections'}, ${formatManat(s.dueQepik)} due.`,
      );
      void invalidate(queryKeys.settlements);
      void invalidate(['developer', 'payments']);
      void invalidate(queryKeys.paymentIntents);
    },
  });
  return (
    <div className="sandbox-period">
      <button type="button" onClick={() => close.mutate()} disabled={close.isPending} data-testid="close-sandbox-period">
        {close.isPending ? 'Closing…' : 'Close the sandbox period now'}
      </button>
      <p className="hint" role="status">
        {made ?? 'In the sandbox you close the period; on live, the marketplace does.'}
      </p>
      {close.error && <ErrorNotice error={toApiError(close.error)} title="Could not close the period." />}
    </div>
  );
}

/** Every read of the page again when the realtime channel says money moved (a burst reads once). */
function useLiveMoney(): void {
  const readAgain = useCoalesced(() => {
    void invalidate(['developer', 'payments']);
    void invalidate(queryKeys.settlements);
    void invalidate(queryKeys.paymentIntents);
  }, 500);
  useEffect(() => {
    const offs = [
      subscribe('payment_intent.updated', readAgain),
      subscribe('settlement.updated', readAgain),
      onReconnect(readAgain),
    ];
    return () => {
      for (const off of offs) off();
    };
  }, [readAgain]);
}

export function Payments() {
  usePageTitle('Payments');
  const environment = usePaymentsEnvironment();
  useLiveMoney();
  return (
    <>
      <div className="page-head">
        <h1 tabIndex={-1}>Payments</h1>
        {environment && <EnvironmentSwitch value={environment} />}
      </div>
      <p className="lead">
        Cash your couriers collect on delivery is owed to the marketplace. Each statement lists the collections of a period and
        what you remitted for them.
      </p>
      <LiveIndicator live="Live: amounts update as payments move" />
      {!environment ? (
        <Loading label="Finding where your money is…" />
      ) : (
        <>
          <section aria-labelledby="balance-heading" className="section">
            <h2 id="balance-heading">Balance</h2>
            <Balance key={environment} environment={environment} />
          </section>
          <section aria-labelledby="intents-heading" className="section">
            <h2 id="intents-heading">Payment intents</h2>
            <PaymentIntentsList key={environment} environment={environment} />
          </section>
          <section aria-labelledby="statements-heading" className="section">
            <h2 id="statements-heading">Statements</h2>
            {environment === 'SANDBOX' && <CloseSandboxPeriod />}
            <Settlements key={environment} environment={environment} />
          </section>
        </>
      )}
    </>
  );
}
