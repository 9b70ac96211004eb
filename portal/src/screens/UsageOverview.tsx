/**
 * Usage across all keys: requests per UTC day stacked by key, and each key's totals.
 */
import { useMemo, useState } from 'react';
import { api } from '../api';
import { isRevoked } from '../components/KeyStatus';
import { usePageTitle } from '../components/PageTitle';
import { type Period, PeriodSwitch } from '../components/PeriodSwitch';
import { Empty, LoadError, Loading } from '../components/States';
import { PALETTE, UsageChart } from '../components/UsageChart';
import { formatDay, formatNumber } from '../format';
import { useResource } from '../hooks';
import { dayLink, requestsLink } from '../request-log';
import { Link, navigate } from '../router';
import type { DeveloperKey, DeveloperKeyUsageSeries } from '../types';
import { sumUsage } from './KeyDetail';
import { EnvironmentBadge } from './Keys';

interface KeySeries {
  key: DeveloperKey;
  series: DeveloperKeyUsageSeries;
}

export function UsageOverview() {
  usePageTitle('Usage');
  const [days, setDays] = useState<Period>(7);
  const data = useResource(async (): Promise<KeySeries[]> => {
    const keys = await api.listKeys();
    const series = await Promise.all(keys.map((k) => api.keyUsage(k.id, days)));
    return keys.map((key, i) => ({ key, series: series[i] }));
  }, [days]);

  // Revoked keys stay in the overview only while they have traffic in the period.
  const rows = useMemo(() => (data.data ?? []).filter((r) => !isRevoked(r.key) || r.series.totalRequests > 0), [data.data]);
  const labels = useMemo(() => (rows[0]?.series.items ?? []).map((d) => formatDay(d.day)), [rows]);
  const charted = useMemo(() => rows.filter((r) => r.series.totalRequests > 0), [rows]);
  const datasets = useMemo(
    () =>
      charted.map((r, i) => ({
        type: 'bar' as const,
        label: `${r.key.name} (${r.key.prefix}…)`,
        data: r.series.items.map((d) => d.requests),
        backgroundColor: PALETTE[i % PALETTE.length],
      })),
    [charted],
  );
  const total = rows.reduce((n, r) => n + r.series.totalRequests, 0);

  return (
    <>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>Usage</h1>
          <p className="lead">Partner API requests per UTC day, all keys together. Open a key for its 4xx and 5xx answers.</p>
        </div>
      </div>
      <div className="section-head">
        <h2>Requests by key</h2>
        <PeriodSwitch value={days} onChange={setDays} />
      </div>
      {data.error && <LoadError error={data.error} onRetry={() => void data.reload()} />}
      {!data.data && data.loading && <Loading label="Loading usage…" />}
      {data.data && rows.length === 0 && (
        <Empty>
          <p>
            No keys yet. <Link to="/keys">Create a key</Link> and its requests show here.
          </p>
        </Empty>
      )}
      {data.data && rows.length > 0 && (
        <>
          <p className="hint" data-testid="overview-total">
            {formatNumber(total)} requests in the last {days} days.
          </p>
          <UsageChart
            labels={labels}
            datasets={datasets}
            stacked
            summary={`Requests per day over ${days} days, stacked by key: ${total} in all.`}
            onPick={(index, dataset) => {
              const day = rows[0]?.series.items[index]?.day;
              const key = dataset === null ? undefined : charted[dataset]?.key;
              if (day) navigate(dayLink(day, { apiKeyId: key?.id }));
            }}
          />
          <p className="hint">Click a day on the chart, or a count below, to open those requests in the request log.</p>
          <div className="table-wrap">
            <table className="table cards-on-phone">
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Environment</th>
                  <th scope="col">Requests</th>
                  <th scope="col">4xx</th>
                  <th scope="col">5xx</th>
                </tr>
              </thead>
              <tbody>
                {rows.map(({ key, series }) => {
                  const t = sumUsage(series.items);
                  return (
                    <tr key={key.id} data-key-id={key.id}>
                      <th scope="row" data-label="Key">
                        <Link to={`/keys/${key.id}`}>{key.name}</Link> <code>{key.prefix}…</code>
                      </th>
                      <td data-label="Environment">
                        <EnvironmentBadge environment={key.environment} />
                      </td>
                      <td data-label="Requests" data-testid="row-requests">
                        {formatNumber(series.totalRequests)}
                      </td>
                      <td data-label="4xx">
                        <PeriodCount keySeries={series} count={t.clientErrors} status="4xx" />
                      </td>
                      <td data-label="5xx">
                        <PeriodCount keySeries={series} count={t.serverErrors} status="5xx" />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
    </>
  );
}

/** A key's count of errors over the period, opening them in the request log. */
function PeriodCount({ keySeries, count, status }: { keySeries: DeveloperKeyUsageSeries; count: number; status: string }) {
  if (count === 0) return <>0</>;
  const since = keySeries.items[0] ? `${keySeries.items[0].day}T00:00:00.000Z` : undefined;
  return (
    <Link
      to={requestsLink({ apiKeyId: keySeries.apiKeyId, status, since })}
      aria-label={`${formatNumber(count)} ${status} answers: open them in the request log`}
    >
      {formatNumber(count)}
    </Link>
  );
}
