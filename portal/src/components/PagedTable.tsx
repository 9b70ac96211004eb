/**
 * A log shown a page at a time (the delivery log, the request log): its load error, its first load, what
 * it says when empty, the table with its rows, and the pager. Rows are the caller's; the page count
 * comes from the answer's `total` and `pageSize`.
 */
import type { ReactNode } from 'react';
import type { Resource } from '../query';
import type { Page } from '../types';
import { Pager } from './Pager';
import { Empty, LoadError, Loading } from './States';

export function PagedTable<T>({
  log,
  page,
  loadingLabel,
  empty,
  tableClass,
  caption,
  head,
  rows,
  summary,
  summaryTestId,
  onPage,
}: {
  log: Omit<Resource<Page<T>>, 'setData'>;
  /** The page asked for (the answer shown may still be the previous page's while it loads). */
  page: number;
  loadingLabel: string;
  /** What an empty page says. */
  empty: ReactNode;
  /** The table's own class, beside `table cards-on-phone`. */
  tableClass: string;
  caption: string;
  /** The header row. */
  head: ReactNode;
  rows: (items: T[]) => ReactNode;
  /** The pager's line, given the page and the number of pages. */
  summary: (page: Page<T>, pages: number) => string;
  summaryTestId?: string;
  onPage: (page: number) => void;
}) {
  const p = log.data;
  const pages = p ? Math.max(1, Math.ceil(p.total / p.pageSize)) : 1;
  return (
    <>
      {log.error && <LoadError error={log.error} onRetry={() => void log.reload()} />}
      {!p && log.loading && <Loading label={loadingLabel} />}
      {p && p.items.length === 0 && <Empty>{empty}</Empty>}
      {p && p.items.length > 0 && (
        <div className="table-wrap">
          <table className={`table cards-on-phone ${tableClass}`} aria-busy={log.loading}>
            <caption className="visually-hidden">{caption}</caption>
            <thead>{head}</thead>
            <tbody>{rows(p.items)}</tbody>
          </table>
        </div>
      )}
      {p && p.total > 0 && (
        <Pager page={page} pages={pages} summaryTestId={summaryTestId} summary={summary(p, pages)} onPage={onPage} />
      )}
    </>
  );
}
