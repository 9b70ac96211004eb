/**
 * One logged request: its facts, both bodies pretty-printed (kept for POSTs and error answers only),
 * the curl line that repeats it with the key left out, and for an error the section of the API
 * reference that describes the operation's answers and their codes.
 */

import type { DeveloperRequestDetail } from '@partner-logistics/sdk/types';
import { type ReactNode, useEffect, useState } from 'react';
import { developer } from '../client';
import { CodeBlock } from '../components/CodeBlock';
import { usePageTitle } from '../components/PageTitle';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { queryKeys, useApiQuery, useKeys } from '../query';
import {
  curlFor,
  formatDuration,
  formatRequestTime,
  orderCodeOfPath,
  prettyBody,
  type Reference,
  referenceFor,
  requestsLink,
  statusTone,
} from '../request-log';
import { Link } from '../router';
import './Requests.css';
import { KeyName } from '../components/KeyBadges';

export function RequestDetail({ requestId }: { requestId: string }) {
  usePageTitle('Request');
  const request = useApiQuery(queryKeys.request(requestId), () => developer.requests.get(requestId));
  const keys = useKeys();
  const [reference, setReference] = useState<Reference | null>(null);
  const r = request.data;

  useEffect(() => {
    if (!r) return;
    let current = true;
    void referenceFor(r).then((ref) => {
      if (current) setReference(ref);
    });
    return () => {
      current = false;
    };
  }, [r]);

  if (request.error?.status === 404) {
    return (
      <>
        <h1 tabIndex={-1}>Request not found</h1>
        <Empty>
          <p>
            This request is not in your log: requests are kept for 35 days. Back to <Link to="/requests">requests</Link>.
          </p>
        </Empty>
      </>
    );
  }
  if (request.error) return <LoadError error={request.error} onRetry={() => void request.reload()} />;
  if (!r) return <Loading label="Loading request…" />;
  const key = keys.data?.find((k) => k.id === r.apiKeyId);
  const orderCode = orderCodeOfPath(r.path);

  return (
    <>
      <p className="breadcrumb">
        <Link to="/requests">Requests</Link> / <span className="mono">{r.id}</span>
      </p>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1} className="request-title">
            <span className="method">{r.method}</span> <span className="mono">{r.path}</span>
          </h1>
          <p className="meta">
            <Badge tone={statusTone(r.statusCode)}>{r.statusCode}</Badge>{' '}
            {r.errorCode && (
              <>
                <a
                  href={reference?.operationLink ?? '/docs'}
                  className="error-code-link"
                  data-testid="error-code-link"
                  title={`Where ${r.errorCode} is described in the API reference`}
                >
                  <code>{r.errorCode}</code>
                </a>{' '}
              </>
            )}
            <span>{formatRequestTime(r.createdAt)}</span>
          </p>
        </div>
      </div>

      <dl className="facts">
        <Fact label="Key">
          <KeyName apiKey={key} environment={r.environment} />
        </Fact>
        <Fact label="Environment">{r.environment === 'SANDBOX' ? 'Sandbox' : 'Live'}</Fact>
        {orderCode && (
          <Fact label="Order">
            <Link to={`/orders/${encodeURIComponent(orderCode)}`} className="mono" data-testid="request-order-link">
              {orderCode}
            </Link>
          </Fact>
        )}
        <Fact label="Duration">{formatDuration(r.durationMs)}</Fact>
        <Fact label="Query">{r.query ? <span className="mono">{r.query}</span> : 'None'}</Fact>
        <Fact label="Idempotency key">{r.idempotencyKey ? <span className="mono">{r.idempotencyKey}</span> : 'None'}</Fact>
        <Fact label="From">
          <span className="mono">{r.ip}</span>
        </Fact>
        <Fact label="User agent">{r.userAgent ?? 'None'}</Fact>
      </dl>
      {r.errorCode && (
        <p className="hint">
          What <code>{r.errorCode}</code> means for this operation:{' '}
          <a href={reference?.operationLink ?? '/docs'}>its answers in the API reference</a>. See also{' '}
          <Link to={requestsLink({ code: r.errorCode })}>every request answered {r.errorCode}</Link>.
        </p>
      )}

      <Body title="Request body" body={r.requestBody} request={r} />
      <Body title="Response body" body={r.responseBody} request={r} />

      <section className="section" aria-labelledby="repeat-heading">
        <h2 id="repeat-heading">Repeat this request</h2>
        <Repeat request={r} baseUrl={reference?.baseUrl ?? null} keyPrefix={key?.prefix ?? null} />
      </section>
    </>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function Body({ title, body, request }: { title: string; body: string | null; request: DeveloperRequestDetail }) {
  const slug = title.toLowerCase().replace(/\s+/g, '-');
  const kept = request.method === 'POST' || request.statusCode >= 400;
  let content: ReactNode;
  if (body === null) {
    content = (
      <p className="hint">
        {kept
          ? 'No body.'
          : 'Not kept: the log keeps bodies of POSTs and error answers only (a successful read’s answer holds customer data).'}
      </p>
    );
  } else if (body === '') content = <p className="hint">Empty.</p>;
  else {
    const shown = prettyBody(body);
    content = (
      <>
        <CodeBlock code={shown.text} label={shown.json ? `${title} (JSON)` : title} />
        {!shown.json && !shown.text.startsWith('[') && (
          <p className="hint">Not valid JSON as kept: bodies are kept up to their first 8 KiB.</p>
        )}
      </>
    );
  }
  return (
    <section className="section" aria-labelledby={`${slug}-heading`} data-testid={slug}>
      <h2 id={`${slug}-heading`}>{title}</h2>
      {content}
    </section>
  );
}

function Repeat({
  request,
  baseUrl,
  keyPrefix,
}: {
  request: DeveloperRequestDetail;
  baseUrl: string | null;
  keyPrefix: string | null;
}) {
  if (baseUrl === null) return <Loading label="Preparing the command…" />;
  const { command, bodyMissing } = curlFor(request, baseUrl);
  return (
    <>
      <p>
        The key is not part of the command: set <code>API_KEY</code> to it first
        {keyPrefix ? (
          <>
            {' '}
            (the key starting <code>{keyPrefix}</code>)
          </>
        ) : null}
        , for instance <code>read -rs API_KEY</code>.
      </p>
      <CodeBlock code={command} label="curl" />
      {bodyMissing && <p className="hint">The body was not kept whole, so it is not in the command: add it with --data.</p>}
      {request.idempotencyKey && (
        <p className="hint">
          With the same Idempotency-Key the API answers the first outcome again; use a new one to make a new request.
        </p>
      )}
    </>
  );
}
