/**
 * One key: its details and its usage (requests, 4xx, 5xx per UTC day for 7 or 35 days, plus totals).
 */

import type { DeveloperKeyUsage } from '@partner-logistics/sdk/types';
import { useMemo, useState } from 'react';
import { developer } from '../client';
import { ApiBaseUrls } from '../components/ApiBaseUrls';
import { EnvironmentBadge, KeyScopes } from '../components/KeyBadges';
import { KeyStatus } from '../components/KeyStatus';
import { usePageTitle } from '../components/PageTitle';
import { type Period, PeriodSwitch } from '../components/PeriodSwitch';
import { Empty, LoadError, Loading } from '../components/States';
import { COLORS, UsageChart } from '../components/UsageChart';
import { formatDateTime, formatDay, formatNumber } from '../format';
import { queryKeys, useApiQuery, useKeys } from '../query';
import { dayLink } from '../request-log';
import { Link, navigate } from '../router';
import { sumUsage } from '../usage';

export function KeyDetail({ keyId }: { keyId: string }) {
  const keys = useKeys();
  const [days, setDays] = useState<Period>(7);
  const usage = useApiQuery(queryKeys.keyUsage(keyId, days), () => developer.keys.usage(keyId, { days }));
  const key = keys.data?.find((k) => k.id === keyId);
  usePageTitle(key ? `${key.name} usage` : 'Key usage');

  if (keys.error && !keys.data) return <LoadError error={keys.error} onRetry={() => void keys.reload()} />;
  if (!keys.data) return <Loading label="Loading key…" />;
  if (!key) {
    return (
      <>
        <h1 tabIndex={-1}>Key not found</h1>
        <Empty>
          <p>
            This key does not exist or belongs to another partner. Back to <Link to="/keys">API keys</Link>.
          </p>
        </Empty>
      </>
    );
  }

  return (
    <>
      <p className="breadcrumb">
        <Link to="/keys">API keys</Link> / {key.name}
      </p>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>{key.name}</h1>
          <p className="meta">
            <code>{key.prefix}…</code> <EnvironmentBadge environment={key.environment} /> <KeyStatus apiKey={key} />
          </p>
        </div>
      </div>
      <ApiBaseUrls only={key.environment} />
      <dl className="facts">
        <div>
          <dt>Scopes</dt>
          <dd>
            <KeyScopes apiKey={key} />
          </dd>
        </div>
        <div>
          <dt>Rate limit</dt>
          <dd>{formatNumber(key.rateLimit)} requests per minute</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{formatDateTime(key.createdAt)}</dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd>{key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never'}</dd>
        </div>
      </dl>

      <section aria-labelledby="usage-heading" className="section">
        <div className="section-head">
          <h2 id="usage-heading">Usage per UTC day</h2>
          <PeriodSwitch value={days} onChange={setDays} />
        </div>
        {usage.error && <LoadError error={usage.error} onRetry={() => void usage.reload()} />}
        {!usage.data && usage.loading && <Loading label="Loading usage…" />}
        {usage.data && <KeyUsage keyId={key.id} items={usage.data.items} totalRequests={usage.data.totalRequests} />}
      </section>
    </>
  );
}

/** A count that opens the request log of that day (and status class), when there is anything to see. */
function DayCount({ keyId, day, count, status }: { keyId: string; day: string; count: number; status?: string }) {
  if (count === 0) return <>0</>;
  const what = status ? `${status} answers` : 'requests';
  return (
    <Link to={dayLink(day, { apiKeyId: keyId, status })} aria-label={`${count} ${what} on ${day}: open them in the request log`}>
      {count}
    </Link>
  );
}

function KeyUsage({ keyId, items, totalRequests }: { keyId: string; items: DeveloperKeyUsage[]; totalRequests: number }) {
  const totals = sumUsage(items);
  const labels = useMemo(() => items.map((d) => formatDay(d.day)), [items]);
  const datasets = useMemo(
    () => [
      { type: 'bar' as const, label: 'Requests', data: items.map((d) => d.requests), backgroundColor: COLORS.requests, order: 2 },
      {
        type: 'line' as const,
        label: '4xx',
        data: items.map((d) => d.clientErrors),
        borderColor: COLORS.clientErrors,
        backgroundColor: COLORS.clientErrors,
        order: 1,
      },
      {
        type: 'line' as const,
        label: '5xx',
        data: items.map((d) => d.serverErrors),
        borderColor: COLORS.serverErrors,
        backgroundColor: COLORS.serverErrors,
        order: 0,
      },
    ],
    [items],
  );
  const summary = `Requests per day over ${items.length} days: ${totalRequests} requests, ${totals.clientErrors} client errors, ${totals.serverErrors} server errors.`;

  return (
    <>
      <ul className="totals" data-testid="usage-totals">
        {(
          [
            ['total-requests', totalRequests, 'requests'],
            ['total-4xx', totals.clientErrors, '4xx answers'],
            ['total-5xx', totals.serverErrors, '5xx answers'],
          ] as const
        ).map(([testId, value, label]) => (
          <li key={testId}>
            <span className="total-value" data-testid={testId}>
              {formatNumber(value)}
            </span>
            <span className="total-label">{label}</span>
          </li>
        ))}
      </ul>
      {totalRequests === 0 && <p className="hint">No requests with this key in this period yet.</p>}
      <UsageChart
        labels={labels}
        datasets={datasets}
        summary={summary}
        onPick={(index, dataset) => {
          const day = items[index]?.day;
          if (day) navigate(dayLink(day, { apiKeyId: keyId, status: dataset === 1 ? '4xx' : dataset === 2 ? '5xx' : undefined }));
        }}
      />
      <p className="hint">
        Click a day on the chart, or a number in the table below, to open those requests in the{' '}
        <Link to={`/requests?apiKeyId=${keyId}`}>request log</Link>.
      </p>
      <details className="data-table">
        <summary>Show the numbers as a table</summary>
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col">Requests</th>
                <th scope="col">4xx</th>
                <th scope="col">5xx</th>
              </tr>
            </thead>
            <tbody>
              {[...items].reverse().map((d) => (
                <tr key={d.day} data-day={d.day}>
                  <th scope="row">{d.day}</th>
                  <td>
                    <DayCount keyId={keyId} day={d.day} count={d.requests} />
                  </td>
                  <td data-testid="day-4xx">
                    <DayCount keyId={keyId} day={d.day} count={d.clientErrors} status="4xx" />
                  </td>
                  <td>
                    <DayCount keyId={keyId} day={d.day} count={d.serverErrors} status="5xx" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </>
  );
}
