/**
 * The webhook event catalog (GET /v1/developer/event-types): every kind a delivery can carry, when it
 * fires, an example envelope and its JSON Schema. The same catalog is in the API reference.
 */
import { api } from '../api';
import { CodeBlock } from '../components/CodeBlock';
import { usePageTitle } from '../components/PageTitle';
import { LoadError, Loading } from '../components/States';
import { useResource } from '../hooks';
import { Link } from '../router';

export function EventCatalog() {
  usePageTitle('Webhook events');
  const catalog = useResource(() => api.eventTypes(), []);
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
      {catalog.data?.map((item) => (
        <section key={item.type} className="section event-kind" aria-labelledby={`kind-${item.type}`} data-event-type={item.type}>
          <h2 id={`kind-${item.type}`}>
            <code>{item.type}</code>
          </h2>
          <p>{item.description}</p>
          <CodeBlock label={`Example ${item.type} envelope`} code={JSON.stringify(item.example, null, 2)} />
          <details>
            <summary>JSON Schema of the envelope</summary>
            <CodeBlock label={`${item.type} schema`} code={JSON.stringify(item.schema, null, 2)} />
          </details>
        </section>
      ))}
    </>
  );
}
