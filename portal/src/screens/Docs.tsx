/**
 * Where the API is (the live and sandbox base URLs the server publishes), where to read the reference,
 * how to call the partner API with a key, and how to verify a webhook with either signature scheme
 * (the X-Partner-Signature snippet is the very file the end-to-end tests verify real deliveries with).
 */
import sdkReadme from '../../../packages/sdk/README.md?raw';
import verifySnippet from '../../snippets/verify-signature.ts?raw';
import { useApiBases, withRealBases } from '../api-bases';
import { ApiBaseUrls } from '../components/ApiBaseUrls';
import { CodeBlock } from '../components/CodeBlock';
import { usePageTitle } from '../components/PageTitle';

const usageSnippet = `import express from 'express';
import { verifySignature } from './verify-signature';

const app = express();
// Keep the raw body: the signature covers the exact bytes that were sent.
app.post('/webhooks/partner', express.text({ type: 'application/json' }), (req, res) => {
  const ok = verifySignature(req.body, req.get('X-Partner-Signature') ?? '', process.env.WEBHOOK_SECRET!);
  if (!ok) return res.status(400).send('bad signature');
  const event = JSON.parse(req.body); // { id, type, createdAt, environment, data }
  // Deliveries may repeat (retries, redeliver): de-duplicate on event.id.
  res.sendStatus(204);
});`;

/** The first code block under a heading of the SDK's README: the page shows the README's own example. */
function readmeExample(heading: string): string {
  const start = sdkReadme.indexOf(heading);
  const block = start < 0 ? null : /```ts\n([\s\S]*?)```/.exec(sdkReadme.slice(start));
  return block ? block[1].trim() : '';
}

const sdkPollSnippet = readmeExample('### 1. Poll your orders');
const sdkWebhookSnippet = readmeExample('### 2. Receive webhooks');

const standardSnippet = `import express from 'express';
import { Webhook } from 'standardwebhooks';

const wh = new Webhook(process.env.WEBHOOK_SECRET!); // the whole whsec_… signing secret
const app = express();
// Keep the raw body: the signature covers the exact bytes that were sent.
app.post('/webhooks/partner', express.text({ type: 'application/json' }), (req, res) => {
  let event;
  try {
    // Throws when the signature does not match or the timestamp is more than 5 minutes off.
    event = wh.verify(req.body, {
      'webhook-id': req.get('webhook-id') ?? '',
      'webhook-timestamp': req.get('webhook-timestamp') ?? '',
      'webhook-signature': req.get('webhook-signature') ?? '',
    });
  } catch {
    return res.status(400).send('bad signature');
  }
  // webhook-id is the event id: de-duplicate on it.
  res.sendStatus(204);
});`;

export function Docs() {
  usePageTitle('Docs');
  const bases = useApiBases();
  const live = bases?.live ?? '…';
  const sandbox = bases?.sandbox ?? '…';
  const curlSnippet = `# Live API: svc_live_… keys
curl ${live}/v1/partner/me \\
  -H "X-Api-Key: svc_live_…"

# Sandbox API: svc_sandbox_… keys
curl ${sandbox}/v1/partner/me \\
  -H "X-Api-Key: svc_sandbox_…"`;
  return (
    <>
      <h1 tabIndex={-1}>Docs</h1>
      <section className="section" aria-labelledby="bases">
        <h2 id="bases">Where the API is</h2>
        <p>Every path in the reference is relative to one of these base URLs. A key works only on the API of its environment.</p>
        <ApiBaseUrls />
      </section>

      <section className="section" aria-labelledby="ref">
        <h2 id="ref">API reference</h2>
        <p>
          Every partner and developer operation, with its fields, error codes and a valid example body for each case, is in the{' '}
          <a href="/docs" data-testid="api-reference-link">
            API reference
          </a>{' '}
          (also as an OpenAPI document: <a href="/v1/developer/openapi.json">openapi.json</a>).
        </p>
      </section>

      <section className="section" aria-labelledby="calling">
        <h2 id="calling">Calling the partner API</h2>
        <p>
          Send the key in the <code>X-Api-Key</code> header. Live keys (<code>svc_live_…</code>) work on the live API, sandbox
          keys (<code>svc_sandbox_…</code>) on the sandbox API. Errors are JSON:{' '}
          <code>{'{ statusCode, code, message, details? }'}</code>; switch on <code>code</code>. A 429 carries{' '}
          <code>Retry-After</code> in seconds.
        </p>
        <CodeBlock code={curlSnippet} label="Example requests" />
      </section>

      <section className="section" aria-labelledby="sdk">
        <h2 id="sdk">TypeScript SDK</h2>
        <p>
          <code>@partner-logistics/sdk</code> (<code>packages/sdk</code> in the platform repository) is typed from the OpenAPI
          document. It adds an <code>Idempotency-Key</code> to each event, retries 429 and 503 answers after{' '}
          <code>Retry-After</code>, pages through lists, refreshes the developer sign-in, throws errors carrying the{' '}
          <code>code</code>, and verifies webhook signatures. A complete integration: poll your orders with{' '}
          <code>updatedSince</code> and report events,
        </p>
        <CodeBlock code={withRealBases(sdkPollSnippet, bases)} label="poll.ts" />
        <p>and receive webhooks, verified against the raw body:</p>
        <CodeBlock code={withRealBases(sdkWebhookSnippet, bases)} label="webhooks.ts" />
      </section>

      <section className="section" aria-labelledby="verify">
        <h2 id="verify">Verify a webhook signature</h2>
        <p>
          Every delivery is signed with the webhook’s signing secret (the whole <code>whsec_…</code> string) in two ways; verify
          whichever suits you. Test pings are signed the same way. Always verify against the raw body, before parsing it.
        </p>
        <h3 id="verify-partner">
          With <code>X-Partner-Signature</code>
        </h3>
        <p>
          <code>X-Partner-Signature: t=&lt;unix&gt;,v1=&lt;hex&gt;</code>, where <code>v1</code> is the HMAC-SHA256, in hex, of{' '}
          <code>&lt;t&gt;.&lt;raw body&gt;</code>. Compare in constant time and reject old timestamps.
        </p>
        <CodeBlock code={verifySnippet.trim()} label="verify-signature.ts" />
        <p>Used in an Express handler:</p>
        <CodeBlock code={usageSnippet} label="server.ts" />
        <h3 id="verify-standard">With the Standard Webhooks headers</h3>
        <p>
          <code>webhook-id</code> (the event id), <code>webhook-timestamp</code> (Unix seconds) and{' '}
          <code>webhook-signature: v1,&lt;base64&gt;</code>, the base64 HMAC-SHA256 of{' '}
          <code>&lt;webhook-id&gt;.&lt;webhook-timestamp&gt;.&lt;raw body&gt;</code>, as the{' '}
          <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> specification defines it. Its libraries verify it for
          you, for example the <code>standardwebhooks</code> npm package: <code>new Webhook(secret).verify(body, headers)</code>.
        </p>
        <CodeBlock code={standardSnippet} label="server-standard-webhooks.ts" />
        <p className="hint">
          Other headers: <code>X-Partner-Event</code> (the event type) and <code>X-Partner-Delivery</code> (the delivery id).
          Answer with any 2xx within 10 seconds; anything else is retried after 1 min, 5 min, 30 min, 2 h and 12 h.
        </p>
      </section>
    </>
  );
}
