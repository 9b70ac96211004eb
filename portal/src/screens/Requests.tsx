/**
 * The request log (docs/decisions-log.md, 'Request log'): every partner-API request made with the partner's keys, newest
 * first, filtered by key, status, error code, method, path and time. The filters live in the URL, so
 * the usage charts can link to a day's errors and a filtered view can be shared. With the live tail on,
 * requests arriving on the realtime channel ('request.logged') that match the filters appear on top of
 * the first page. What the log left out (overload, the live tail's 50 a second) is counted above.
 */

import type { DeveloperRequest } from '@partner-logistics/sdk/types';
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { developer } from '../client';
import { PagedTable } from '../components/PagedTable';
import { usePageTitle } from '../components/PageTitle';
import { Badge } from '../components/States';
import { formatNumber } from '../format';
import { queryKeys, useApiQuery, useKeys } from '../query';
import { getRealtimeStatus, onRealtimeStatus, onReconnect, subscribe } from '../realtime';
import { filtersFrom, formatDuration, formatRequestTime, matches, requestsLink, statusTone } from '../request-log';
import { Link, navigate, useSearch } from '../router';
import './Requests.css';
import { KeyName } from '../components/KeyBadges';
import { Filters } from '../components/RequestFilters';

const PAGE_SIZE = 20;

export function Requests() {
  usePageTitle('Requests');
  const search = useSearch();
  const filters = useMemo(() => filtersFrom(search), [search]);
  const page = Math.max(1, Number(new URLSearchParams(search).get('page')) || 1);
  const [live, setLive] = useState(false);
  const [fresh, setFresh] = useState<Record<string, true>>({});

  const keys = useKeys();
  // The URL's filters go to the API as they are: a method it does not know is answered ERR_VALIDATION.
  const query = { ...filters, page, pageSize: PAGE_SIZE } as Parameters<typeof developer.requests.list>[0];
  const log = useApiQuery([...queryKeys.requests, filters, page], () => developer.requests.list(query), { live: true });
  const drops = useApiQuery(queryKeys.requestLogDrops, () => developer.GET('/v1/developer/requests/drops'));
  const { reload } = log;

  // Live tail: matching requests go on top of the first page as they arrive. They are kept beside the
  // stored page rather than written into it: a request is stored up to a second after it is streamed, so
  // a page read meanwhile (turning the tail on, a reconnection) would not hold it yet and would drop it.
  // Each arrival shows until the stored page holds it too; arrivals belong to the filters and page they
  // came under.
  const view = `${JSON.stringify(filters)}|${page}`;
  const [arrived, setArrived] = useState<{ view: string; items: DeveloperRequest[] }>({ view, items: [] });
  const onLogged = useCallback(
    ({ request }: { request: DeveloperRequest }) => {
      if (!matches(request, filters)) return;
      setArrived((a) => {
        const items = a.view === view ? a.items : [];
        if (items.some((r) => r.id === request.id)) return a;
        return { view, items: [request, ...items].slice(0, PAGE_SIZE) };
      });
      setFresh((f) => ({ ...f, [request.id]: true }));
    },
    [filters, view],
  );
  useEffect(() => (live && page === 1 ? subscribe('request.logged', onLogged) : undefined), [live, page, onLogged]);
  useEffect(() => (live ? onReconnect(() => void reload()) : undefined), [live, reload]);
  const toggleLive = (on: boolean) => {
    setLive(on);
    setArrived({ view, items: [] });
    // Start from what is stored now; newer requests then arrive live.
    if (on) void reload();
  };
  const shown = useMemo(
    () => (live && arrived.view === view ? withArrivals(log, arrived.items) : log),
    [live, arrived, view, log],
  );

  const keyById = useMemo(() => new Map((keys.data ?? []).map((k) => [k.id, k])), [keys.data]);
  const filtered = Object.keys(filters).length > 0;

  return (
    <>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>Requests</h1>
          <p className="lead">
            Every request made with your API keys, newest first, kept for 35 days. A request shows here within a few seconds.
          </p>
        </div>
      </div>

      <Filters filters={filters} keys={keys.data ?? []} />

      <div className="toolbar log-toolbar">
        <label className="live-toggle">
          <input
            type="checkbox"
            role="switch"
            aria-checked={live}
            checked={live}
            onChange={(e) => toggleLive(e.target.checked)}
            data-testid="live-tail"
          />{' '}
          Live tail
        </label>
        {live && <LiveStatus paused={page !== 1} />}
      </div>
      <DropNotice drops={drops.data} />

      <PagedTable
        log={shown}
        page={page}
        loadingLabel="Loading requests…"
        empty={
          <p>
            {filtered
              ? 'No requests match these filters.'
              : 'No requests yet. Requests made with your keys show here within a few seconds.'}
          </p>
        }
        tableClass="requests"
        caption="Requests, newest first"
        head={
          <tr>
            <th scope="col">Request</th>
            <th scope="col">Status</th>
            <th scope="col">Key</th>
            <th scope="col">Time</th>
            <th scope="col">Duration</th>
          </tr>
        }
        rows={(items) => (
          <>
            {items.map((r) => (
              <tr key={r.id} data-request-id={r.id} data-status={r.statusCode} className={fresh[r.id] ? 'flash-a' : undefined}>
                <th scope="row" data-label="Request">
                  <Link to={`/requests/${encodeURIComponent(r.id)}`} className="request-link">
                    <span className="method">{r.method}</span> <span className="mono request-path">{r.path}</span>
                  </Link>
                  {r.query && <span className="mono request-query">?{r.query}</span>}
                </th>
                <td data-label="Status" data-testid="request-status">
                  <Badge tone={statusTone(r.statusCode)}>{r.statusCode}</Badge>
                  {r.errorCode && <code className="error-code">{r.errorCode}</code>}
                </td>
                <td data-label="Key">
                  <KeyName apiKey={keyById.get(r.apiKeyId)} environment={r.environment} />
                </td>
                <td data-label="Time">{formatRequestTime(r.createdAt)}</td>
                <td data-label="Duration">{formatDuration(r.durationMs)}</td>
              </tr>
            ))}
          </>
        )}
        summaryTestId="requests-total"
        summary={(p, pages) => `Page ${p.page} of ${pages} · ${formatNumber(p.total)} ${p.total === 1 ? 'request' : 'requests'}`}
        onPage={(n) => navigate(requestsLink(filters, n))}
      />
    </>
  );
}

/** The stored page with the live arrivals it does not hold yet on top, newest first, one page long. */
function withArrivals<L extends { data?: { items: DeveloperRequest[]; total: number; pageSize: number } }>(
  log: L,
  arrived: DeveloperRequest[],
): L {
  const stored = log.data;
  if (!stored || arrived.length === 0) return log;
  const held = new Set(stored.items.map((r) => r.id));
  const extra = arrived.filter((r) => !held.has(r.id));
  if (extra.length === 0) return log;
  const items = [...extra, ...stored.items]
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
    .slice(0, stored.pageSize);
  return { ...log, data: { ...stored, total: stored.total + extra.length, items } };
}

function LiveStatus({ paused }: { paused: boolean }) {
  const status = useSyncExternalStore(onRealtimeStatus, getRealtimeStatus);
  const text = paused
    ? 'Live tail shows on the first page only'
    : status === 'live'
      ? 'Live: new requests appear on top (at most 50 a second)'
      : status === 'connecting'
        ? 'Connecting to live updates…'
        : 'Live updates paused: reconnecting';
  return (
    <p className={`live live-${paused ? 'off' : status}`} role="status" data-testid="live-status" data-state={status}>
      <span className="live-dot" aria-hidden="true" /> {text}
    </p>
  );
}

/** What the log left out in the last 24 hours, in plain words. */
function DropNotice({ drops }: { drops: { dropped: number; notStreamed: number } | undefined }) {
  if (!drops) return null;
  const { dropped, notStreamed } = drops;
  if (dropped === 0 && notStreamed === 0) {
    return (
      <p className="hint" data-testid="log-drops" data-dropped="0">
        Nothing was left out of the log in the last 24 hours.
      </p>
    );
  }
  return (
    <div className="notice notice-warning" data-testid="log-drops" data-dropped={dropped}>
      <p>In the last 24 hours:</p>
      <ul>
        {dropped > 0 && (
          <li>
            {formatNumber(dropped)} {dropped === 1 ? 'request was' : 'requests were'} left out of the log because it was
            overloaded (only successful reads are ever left out; errors and writes are always kept).
          </li>
        )}
        {notStreamed > 0 && (
          <li>
            {formatNumber(notStreamed)} {notStreamed === 1 ? 'request was' : 'requests were'} logged but not shown on the live
            tail (more than 50 a second). They are in the list.
          </li>
        )}
      </ul>
    </div>
  );
}
