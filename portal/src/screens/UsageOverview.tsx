/**
 * Usage across all keys: requests per UTC day stacked by integration, and each key's totals. A key and
 * its rotation successors are one integration (key-lineage.ts): one series in the chart, named by the
 * newest key, so a rotation does not split a line in two. The table keeps one row per key.
 */

import type { DeveloperKey, DeveloperKeyUsageSeries } from '@partner-logistics/sdk/types';
import { useMemo, useState } from 'react';
import { developer } from '../client';
import { EnvironmentBadge } from '../components/KeyBadges';
import { isRevoked } from '../components/KeyStatus';
import { usePageTitle } from '../components/PageTitle';
import { type Period, PeriodSwitch } from '../components/PeriodSwitch';
import { Empty, LoadError, Loading } from '../components/States';
import { PALETTE, UsageChart } from '../components/UsageChart';
import { formatDay, formatNumber } from '../format';
import { integrationOf, keyLabel } from '../key-lineage';
import { queryKeys, useApiQuery } from '../query';
import { dayLink, requestsLink } from '../request-log';
import { Link, navigate } from '../router';
import { sumUsage } from '../usage';

interface KeySeries {
  key: DeveloperKey;
  series: DeveloperKeyUsageSeries;
}

export function UsageOverview() {
  usePageTitle('Usage');
  const [days, setDays] = useState<Period>(7);
  const data = useApiQuery(
    queryKeys.usageOverview(days),
    async (): Promise<KeySeries[]> => {
      const keys = (await developer.keys.list()).items;
      const series = await Promise.all(keys.map((k) => developer.keys.usage(k.id, { days })));
      return keys.map((key, i) => ({ key, series: series[i] }));
    },
    { live: true },
  );

  // Revoked keys stay in the overview only while they have traffic in the period.
  const rows = useMemo(() => (data.data ?? []).filter((r) => !isRevoked(r.key) || r.series.totalRequests > 0), [data.data]);
  const labels = useMemo(() => (rows[0]?.series.items ?? []).map((d) => formatDay(d.day)), [rows]);
  const charted = useMemo(() => integrations(data.data ?? []), [data.data]);
  const datasets = useMemo(
    () =>
      charted.map((g, i) => ({
        type: 'bar' as const,
        label: g.keys.length > 1 ? `${g.newest.name} (${g.newest.prefix}…, with its rotated keys)` : keyLabel(g.newest),
        data: g.requests,
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
          <p className="lead">
            Partner API requests per day, all keys together. Days are <strong>UTC days</strong> (midnight to midnight UTC),
            whatever your time zone. A key and the keys it was rotated into count as one integration in the chart. Open a key for
            its 4xx and 5xx answers.
          </p>
        </div>
      </div>
      <div className="section-head">
        <h2>Requests by integration, per UTC day</h2>
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
            summary={`Requests per UTC day over ${days} days, stacked by integration: ${total} in all.`}
            onPick={(index, dataset) => {
              const day = rows[0]?.series.items[index]?.day;
              const group = dataset === null ? undefined : charted[dataset];
              // One key: its requests; an integration of several keys: the day's requests of all keys.
              const apiKeyId = group && group.keys.length === 1 ? group.newest.id : undefined;
              if (day) navigate(dayLink(day, { apiKeyId }));
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
                        <Link to={`/keys/${key.id}`}>{keyLabel(key)}</Link>
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

interface Integration {
  /** The newest key of the chain: it names the integration. */
  newest: DeveloperKey;
  keys: DeveloperKey[];
  /** Requests per day, summed over the chain's keys. */
  requests: number[];
}

/** Keys with traffic in the period, grouped by rotation chain, in the order of their newest key. */
function integrations(all: KeySeries[]): Integration[] {
  const keys = all.map((r) => r.key);
  const byNewest = new Map<string, Integration>();
  for (const { key, series } of all) {
    if (series.totalRequests === 0) continue;
    const newest = integrationOf(key, keys);
    let group = byNewest.get(newest.id);
    if (!group) {
      group = { newest, keys: [], requests: series.items.map(() => 0) };
      byNewest.set(newest.id, group);
    }
    group.keys.push(key);
    series.items.forEach((d, i) => {
      group.requests[i] += d.requests;
    });
  }
  return [...byNewest.values()];
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
