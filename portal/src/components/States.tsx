import type { PartnerApiError } from '@partner-logistics/sdk/developer';
import type { ReactNode } from 'react';
import { ErrorNotice } from './ErrorNotice';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/**
 * An error that stopped a screen from loading. "Try again" only where trying again can help (the
 * network, a timeout, a rate limit, the server's own trouble); a refusal (a missing scope, a 404)
 * would answer the same again.
 */
export function LoadError({ error, onRetry }: { error: PartnerApiError; onRetry: () => void }) {
  const retryable = error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;
  return (
    <div className="load-error">
      <ErrorNotice error={error} title="Could not load." />
      {retryable && (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Badge({ tone, children }: { tone: 'ok' | 'warn' | 'bad' | 'muted' | 'live' | 'sandbox'; children: ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}
