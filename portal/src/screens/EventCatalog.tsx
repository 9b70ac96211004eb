/**
 * The webhook event catalog (GET /v1/developer/event-types): every kind a delivery can carry, when it
 * fires, an example envelope and its JSON Schema. The same catalog is in the API reference. Kinds come
 * in the order of an order's life (event-kinds.ts, lifecycleOrder: the first a partner receives first),
 * kinds the portal does not know yet after them in the API's order, with an index at the top; the API's descriptions
 * are rendered (inline code), never shown as raw markdown.
 */

import { CodeBlock } from '../components/CodeBlock';
import { InlineText } from '../components/InlineText';
import { usePageTitle } from '../components/PageTitle';
import { LoadError, Loading } from '../components/States';
import { firstSentence, lifecycleOrder } from '../event-kinds';
import { useEventCatalog } from '../query';
import { Link } from '../router';

export function EventCatalog() {
  usePageTitle('Webhook events');
  const catalog = useEventCatalog();
  const items = catalog.data ? lifecycleOrder(catalog.data) : undefined;
  return (
    <>
      <div className="page-head">
        <div>
          <h1 tabIndex={-1}>Webhook events</h1>
          <p className="lead">
            Every delivery is a POST of one JSON envelope <code>{'{ id, type, createdAt, environment, data }'}</code>, signed in{' '}
            <code>X-Partner-Signature</code>. De-duplicate by <code>id</code>: delivery is at least once. Send yourself any of
            these from a webhook’s “Send test event” (<Link to="/webhooks">Webhooks</Link>); samples have ids starting with{' '}
            <code>evt_test_</code>.
          </p>
        </div>
      </div>
      {catalog.error && <LoadError error={catalog.error} onRetry={() => void catalog.reload()} />}
      {!catalog.data && catalog.loading && <Loading label="Loading the event catalog…" />}
      {items && (
        <nav className="section event-index" aria-labelledby="event-index-heading">
          <h2 id="event-index-heading">Events, in the order an order meets them</h2>
          <ol data-testid="event-index">
            {items.map((item) => (
              <li key={item.type}>
                <a href={`#kind-${item.type}`}>
                  <code>{item.type}</code>
                </a>{' '}
                <span className="hint">
                  <InlineText text={firstSentence(item.description)} />
                </span>
              </li>
            ))}
          </ol>
        </nav>
      )}
      {items?.map((item) => (
        <section key={item.type} className="section event-kind" aria-labelledby={`kind-${item.type}`} data-event-type={item.type}>
          <h2 id={`kind-${item.type}`}>
            <code>{item.type}</code>
          </h2>
          <p>
            <InlineText text={item.description} />
          </p>
          <div className="event-example">
            <CodeBlock label={`Example ${item.type} envelope`} code={JSON.stringify(item.example, null, 2)} />
          </div>
          <details>
            <summary>JSON Schema of the envelope</summary>
            <CodeBlock label={`${item.type} schema`} code={JSON.stringify(item.schema, null, 2)} />
          </details>
        </section>
      ))}
    </>
  );
}
