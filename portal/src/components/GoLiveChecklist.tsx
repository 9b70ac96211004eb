/**
 * The go-live checklist of a sandbox key: progress, then each item, done (with when) or open, each
 * with what to send and a link to the operation in the API reference. The items and their hints come
 * from the API; only the reference links are the portal's.
 *
 * An item takes the same room done or open (title, one status line, the hint), so the page below
 * does not move while items turn done on the realtime channel: a move between a press and a release
 * lands the release outside the button, and the browser then sends no click (the Sandbox page's order
 * buttons sit below the checklist). At 13 of 13 the next step is a live key.
 */

import type { GoLiveChecklist as Checklist } from '@partner-logistics/sdk/types';
import { useApiBases } from '../api-bases';
import { formatDateTime } from '../format';
import { Link } from '../router';

/** The reference operation behind each item (its anchor on /docs). */
const REFERENCE: Record<string, string> = {
  'orders-listed-updated-since': 'listPartnerOrders',
  'event-picked-up': 'createPartnerOrderEvent',
  'event-en-route': 'createPartnerOrderEvent',
  'event-delivered-exact-cod': 'createPartnerOrderEvent',
  'event-delivered-cod-variance': 'createPartnerOrderEvent',
  'event-failed-with-reason': 'createPartnerOrderEvent',
  'event-en-route-after-failed': 'createPartnerOrderEvent',
  'event-idempotent-repeat': 'createPartnerOrderEvent',
  'webhook-order-assigned-to-partner': 'createSandboxOrder',
  'webhook-order-status-changed': 'moveSandboxOrder',
  'webhook-order-delivered': 'createPartnerOrderEvent',
  'webhook-order-cancelled': 'moveSandboxOrder',
  'webhook-batch-completed': 'moveSandboxBatch',
};

export function GoLiveChecklist({ checklist }: { checklist: Checklist }) {
  const bases = useApiBases();
  const done = checklist.items.filter((i) => i.done).length;
  const total = checklist.items.length;
  return (
    <>
      <div className="checklist-progress" data-testid="checklist-progress">
        <progress max={total} value={done} aria-label="Checklist progress" />
        <span>
          <strong>
            {done} of {total}
          </strong>{' '}
          proven
        </span>
      </div>
      {checklist.complete ? (
        <div className="notice notice-info" data-testid="checklist-complete">
          <p>
            <strong>Every item is proven: this integration is ready for a live key.</strong>
          </p>
          <p data-testid="next-step">
            Next: <Link to={`/keys?create=LIVE&from=${encodeURIComponent(checklist.apiKeyId)}`}>create a live key</Link> with the
            same scopes, point your system at the live API {bases && <code>{bases.live}</code>}, and add its webhooks on{' '}
            <Link to="/webhooks">Webhooks</Link>. The live key is shown once, like this one was.
          </p>
        </div>
      ) : (
        <p className="hint">
          Each item turns done when this key really does it in the sandbox: its requests, its events and its webhooks’ answers
          count, nothing else.
        </p>
      )}
      <ol className="checklist">
        {checklist.items.map((item) => (
          <li key={item.id} data-item-id={item.id} data-done={item.done} className={item.done ? 'is-done' : undefined}>
            <span className="checklist-mark" aria-hidden="true">
              {item.done ? '✓' : ''}
            </span>
            <div>
              <span className="checklist-title">
                {item.title}
                <span className="visually-hidden">{item.done ? ' (done)' : ' (open)'}</span>
              </span>
              <span className="hint checklist-when">
                {item.done ? (item.doneAt ? `Done ${formatDateTime(item.doneAt)}` : 'Done') : 'Not yet'}
              </span>
              <p className="checklist-hint">
                {item.hint}{' '}
                {REFERENCE[item.id] && (
                  <a href={`/docs#operation/${REFERENCE[item.id]}`} target="_blank" rel="noreferrer">
                    Reference<span className="visually-hidden"> for {item.title}</span>
                  </a>
                )}
                {item.id.startsWith('webhook-') && (
                  <>
                    {' · '}
                    <Link to="/webhooks">Webhooks</Link>
                  </>
                )}
              </p>
            </div>
          </li>
        ))}
      </ol>
    </>
  );
}
