import type { ReactNode } from 'react';

/** Previous / Next over the pages of a list, with what the list holds in between. */
export function Pager({
  page,
  pages,
  summary,
  summaryTestId,
  onPage,
}: {
  page: number;
  pages: number;
  summary: ReactNode;
  summaryTestId?: string;
  onPage: (page: number) => void;
}) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        Previous
      </button>
      <span data-testid={summaryTestId}>{summary}</span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= pages}>
        Next
      </button>
    </nav>
  );
}
