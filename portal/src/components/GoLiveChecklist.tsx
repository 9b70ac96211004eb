/**
 * The go-live checklist of a sandbox key: progress, then each item, done (with when) or open (with
 * what to send and a link to the operation in the API reference). The items and their hints come from
 * the API; only the reference links are the portal's.
 */
import { formatDateTime } from '../format';
import { Link } from '../router';
import type { GoLiveChecklist as Checklist } from '../sandbox-api';

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
        <p className="notice notice-info" data-testid="checklist-complete">
          Every item is proven: this integration is ready for a live key.
        </p>
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
              {item.done && item.doneAt ? (
                <span className="hint checklist-when">Done {formatDateTime(item.doneAt)}</span>
              ) : (
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
              )}
            </div>
          </li>
        ))}
      </ol>
    </>
  );
}
