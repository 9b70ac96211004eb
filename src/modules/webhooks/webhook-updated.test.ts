/**
 * webhook.updated (docs/decisions-log.md, 'Webhook operations'): announced to the partner when a webhook
 * is edited or rotated, or its failure streak or isActive changes.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { waitFor } from '../../../test/wait.js';
import { newId } from '../../shared/ids.js';
import type { WebhookUpdated } from './signals.js';
import {
  callAs,
  createEndpoint,
  devAuth,
  receiver,
  sendTestEvent,
  setUpAppWithReceiver,
  startTestWorker,
  t,
} from './webhooks.test-helpers.js';

setUpAppWithReceiver();

describe('webhook.updated', () => {
  it('is announced to the partner when a webhook is edited, rotated, or its streak or isActive changes', async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver);
    const seen: WebhookUpdated[] = [];
    const listener = (e: WebhookUpdated) => {
      if (e.webhook.id === h.hook.id) seen.push(e);
    };
    t.ctx.events.on('webhook.updated', listener);
    onTestFinished(() => void t.ctx.events.off('webhook.updated', listener));

    const auth = await devAuth(t, h.partner);
    await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${h.hook.id}`,
      headers: auth,
      payload: { isActive: false },
    });
    await waitFor(() => seen.length === 1);
    expect(seen[0]).toEqual({ partnerId: h.partner.id, webhook: expect.objectContaining({ id: h.hook.id, isActive: false }) });
    await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${h.hook.id}`,
      headers: auth,
      payload: { isActive: true },
    });
    await callAs(t, h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/rotate-secret`, {});
    await waitFor(() => seen.length === 3);
    expect(JSON.stringify(seen)).not.toContain('whsec_');
    // A delivered attempt ends a streak: announced with the streak at 0.
    await t.ctx.db.query('UPDATE webhooks SET consecutive_failures = 4 WHERE id = $1', [h.hook.id]);
    await sendTestEvent(t, h.partner, h.hook.id);
    await waitFor(() => seen.length === 4);
    expect(seen[3].webhook).toMatchObject({ consecutiveFailures: 0, isActive: true });
  });

  it('a dead delivery moves the streak and is announced; the 50th switches the webhook off', async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver);
    receiver.on(h.path, { status: 500 });
    const seen: WebhookUpdated[] = [];
    const listener = (e: WebhookUpdated) => {
      if (e.webhook.id === h.hook.id) seen.push(e);
    };
    t.ctx.events.on('webhook.updated', listener);
    onTestFinished(() => void t.ctx.events.off('webhook.updated', listener));
    await t.ctx.db.query('UPDATE webhooks SET consecutive_failures = 49 WHERE id = $1', [h.hook.id]);
    // A delivery at the last attempt of its schedule: it dies on it.
    await t.ctx.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, 'evt_last_try', 'ping', '{}', 'FAILED', 5, $4, $4, $4)`,
      [newId(), h.hook.id, h.partner.id, t.clock.now()],
    );
    t.ctx.events.emit('webhooks.due');
    await waitFor(() => seen.length === 1);
    expect(seen[0].webhook).toMatchObject({ consecutiveFailures: 50, isActive: false });
  });
});
