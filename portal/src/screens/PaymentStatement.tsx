/**
 * One statement (settlement) of the partner: its period, status and sums, then its lines oldest first
 * (cash collected per order, the marketplace's adjustments, the partner's remittances). A collection
 * links to its order's page; a line carrying an earlier statement's overpayment says it is a credit and
 * links to that statement, and an over-remitted statement says where its overpayment goes. The CSV is
 * the same file the partner API gives. Live: a remittance or an adjustment on it ('settlement.updated')
 * shows without a reload.
 */
import type { Settlement, SettlementLine } from '@partner-logistics/sdk/types';
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { developer } from '../client';
import { ErrorNotice } from '../components/ErrorNotice';
import { Pager } from '../components/Pager';
import { usePageTitle } from '../components/PageTitle';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { formatDateTime, formatNumber } from '../format';
import {
  formatManat,
  LINE_TYPE_LABEL,
  overpaymentCarriedFrom,
  SETTLEMENT_STATUS_LABEL,
  SETTLEMENT_STATUS_TONE,
} from '../payments';
import { invalidate, queryKeys, useApiQuery } from '../query';
import { onReconnect, subscribe } from '../realtime';
import { Link } from '../router';
import './Payments.css';

const PAGE_SIZE = 50;

function Sums({ s }: { s: Settlement }) {
  const facts: Array<[string, string, string]> = [
    ['Collections', formatNumber(s.collectionsCount), 'collections'],
    ['Expected at the door', formatManat(s.expectedQepik), 'expected'],
    ['Collected', formatManat(s.collectedQepik), 'collected'],
    ['Short of expected', formatManat(s.varianceQepik), 'variance'],
    ['Adjustments', formatManat(s.adjustmentsQepik), 'adjustments'],
    ['Due to the marketplace', formatManat(s.dueQepik), 'due'],
    ['Remitted', formatManat(s.remittedQepik), 'remitted'],
    ['Outstanding', formatManat(s.outstandingQepik), 'outstanding'],
  ];
  return (
    <>
      <dl className="facts" data-testid="statement-sums">
        {facts.map(([label, value, testId]) => (
          <div key={testId}>
            <dt>{label}</dt>
            <dd data-testid={`sum-${testId}`}>{value}</dd>
          </div>
        ))}
      </dl>
      {s.outstandingQepik < 0 && (
        <p className="hint" data-testid="statement-overpaid">
          You remitted {formatManat(-s.outstandingQepik)} more than this statement asks. That overpayment is your credit: your
          next statement takes it off what you owe, as an adjustment line.
        </p>
      )}
    </>
  );
}

/**
 * One line. The line that carries an earlier statement's overpayment is said to be a credit, its note
 * linking to that statement (docs/payments.md, "Overpayment").
 */
function LineRow({ line }: { line: SettlementLine }) {
  const carriedFrom = overpaymentCarriedFrom(line);
  return (
    <tr data-line-type={line.type} data-credit-from={carriedFrom ?? undefined}>
      <th scope="row" data-label="Line">
        {carriedFrom ? 'Credit from an earlier statement' : LINE_TYPE_LABEL[line.type]}
      </th>
      <td data-label="Order" className="one-line">
        {line.orderCode ? (
          <Link to={`/orders/${encodeURIComponent(line.orderCode)}`} className="mono">
            {line.orderCode}
          </Link>
        ) : (
          '—'
        )}
      </td>
      <td data-label="Expected" className="one-line">
        {line.expectedQepik === null ? '—' : formatManat(line.expectedQepik)}
      </td>
      <td data-label="Amount" className="one-line">
        {formatManat(line.amountQepik)}
      </td>
      <td data-label="Note">
        {carriedFrom ? (
          <>
            Overpayment of{' '}
            <Link to={`/payments/settlements/${encodeURIComponent(carriedFrom)}`} className="mono">
              {carriedFrom}
            </Link>
            , taken off what this statement asks
          </>
        ) : (
          [line.note, line.reference ? `Reference ${line.reference}` : null].filter(Boolean).join(' · ') || '—'
        )}
      </td>
      <td data-label="When">{formatDateTime(line.at)}</td>
    </tr>
  );
}

function Lines({ settlementId }: { settlementId: string }) {
  const [page, setPage] = useState(1);
  const lines = useApiQuery([...queryKeys.settlements, settlementId, 'lines', page], () =>
    developer.GET('/v1/developer/settlements/{id}/lines', {
      params: { path: { id: settlementId }, query: { page, pageSize: PAGE_SIZE } },
    }),
  );
  if (lines.error) return <LoadError error={lines.error} onRetry={() => void lines.reload()} />;
  const data = lines.data;
  if (!data) return <Loading label="Loading lines…" />;
  if (data.total === 0) {
    return (
      <Empty>
        <p>This statement has no lines: no cash was collected in its period.</p>
      </Empty>
    );
  }
  const pages = Math.max(1, Math.ceil(data.total / data.pageSize));
  return (
    <>
      <div className="table-wrap">
        <table className="table cards-on-phone statement-lines" data-testid="statement-lines">
          <caption className="visually-hidden">Statement lines, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col">Order</th>
              <th scope="col">Expected</th>
              <th scope="col">Amount</th>
              <th scope="col">Note</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            {data.items.map((line) => (
              <LineRow key={line.id} line={line} />
            ))}
          </tbody>
        </table>
      </div>
      {pages > 1 && (
        <Pager page={page} pages={pages} summary={`Page ${page} of ${pages} (${data.total} lines)`} onPage={setPage} />
      )}
    </>
  );
}

/**
 * Saves the statement's CSV as a file. An <a href> cannot send the session's token, so the file is
 * fetched with it and handed to the browser as a download.
 */
async function downloadStatementCsv(settlementId: string): Promise<void> {
  const csv = await developer.GET('/v1/developer/settlements/{id}/lines.csv', {
    params: { path: { id: settlementId } },
    parseAs: 'text',
  });
  const url = URL.createObjectURL(new Blob([String(csv)], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `${settlementId}-lines.csv`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function CsvButton({ settlementId }: { settlementId: string }) {
  const download = useMutation({ mutationFn: downloadStatementCsv });
  return (
    <div>
      <button type="button" onClick={() => download.mutate(settlementId)} disabled={download.isPending}>
        {download.isPending ? 'Preparing the CSV…' : 'Download CSV'}
      </button>
      {download.error && <ErrorNotice error={download.error} title="Could not download the CSV." />}
    </div>
  );
}

export function PaymentStatement({ settlementId }: { settlementId: string }) {
  usePageTitle('Statement');
  const statement = useApiQuery([...queryKeys.settlements, settlementId], () =>
    developer.GET('/v1/developer/settlements/{id}', { params: { path: { id: settlementId } } }),
  );
  const back = (s?: Settlement) =>
    s?.environment === 'sandbox' ? '/payments?environment=sandbox' : '/payments?environment=live';
  // Live: a remittance or an adjustment on this statement reads it and its lines again.
  const { reload } = statement;
  useEffect(() => {
    const offs = [
      subscribe('settlement.updated', ({ settlement }) => {
        if (settlement.id === settlementId) void invalidate(queryKeys.settlements);
      }),
      onReconnect(() => void reload()),
    ];
    return () => {
      for (const off of offs) off();
    };
  }, [settlementId, reload]);
  if (statement.error && !statement.data) {
    if (statement.error.status === 404) {
      return (
        <>
          <h1 tabIndex={-1}>Statement not found</h1>
          <Empty>
            <p>
              There is no statement {settlementId} of your partner. <Link to="/payments">Back to payments</Link>
            </p>
          </Empty>
        </>
      );
    }
    return <LoadError error={statement.error} onRetry={() => void statement.reload()} />;
  }
  const s = statement.data;
  if (!s) return <Loading label="Loading the statement…" />;
  return (
    <>
      <p className="breadcrumb">
        <Link to={back(s)}>Payments</Link> / Statement
      </p>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>
            Statement {formatDateTime(s.periodStart)} – {formatDateTime(s.periodEnd)}
          </h1>
          <p className="meta">
            <Badge tone={SETTLEMENT_STATUS_TONE[s.status]}>
              <span data-testid="statement-status">{SETTLEMENT_STATUS_LABEL[s.status]}</span>
            </Badge>{' '}
            <Badge tone={s.environment === 'live' ? 'live' : 'sandbox'}>{s.environment === 'live' ? 'Live' : 'Sandbox'}</Badge>{' '}
            <span className="mono">{s.id}</span>
            {s.settledAt ? ` · settled ${formatDateTime(s.settledAt)}` : ''}
          </p>
        </div>
        <CsvButton settlementId={s.id} />
      </div>
      <Sums s={s} />
      <section aria-labelledby="lines-heading" className="section">
        <h2 id="lines-heading">Lines</h2>
        <Lines settlementId={s.id} />
      </section>
    </>
  );
}
