/**
 * What wakes the worker besides its poll: in-process events, and on a PostgreSQL server LISTEN on a
 * dedicated connection, so a delivery queued by an API process is attempted by a worker process
 * within milliseconds. A lost LISTEN connection is re-established with backoff; meanwhile the poll
 * keeps everything moving, only a little later.
 */
import type { PoolClient } from 'pg';
import type { AppContext } from '../context.js';
import { DELIVERIES_DUE_CHANNEL, DELIVERIES_DUE_EVENT, OUTBOX_CHANNEL } from '../modules/webhooks/signals.js';

export interface WakeHandlers {
  outbox: () => void;
  deliveries: () => void;
  /** The test clock moved: things may have come due, or expired. */
  clock: () => void;
}

export function subscribeWakeups(ctx: AppContext, handlers: WakeHandlers): () => Promise<void> {
  ctx.events.on('outbox', handlers.outbox);
  ctx.events.on(DELIVERIES_DUE_EVENT, handlers.deliveries);
  ctx.events.on('wake', handlers.clock);

  let closed = false;
  let client: PoolClient | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let backoffMs = 500;

  const listen = async () => {
    if (closed || ctx.db.kind !== 'server') return;
    try {
      const c = await ctx.db.connect();
      if (closed) {
        c.release(true);
        return;
      }
      client = c;
      c.on('notification', (msg) => {
        if (msg.channel === OUTBOX_CHANNEL) handlers.outbox();
        else handlers.deliveries();
      });
      c.on('error', () => reconnect());
      await c.query(`LISTEN ${DELIVERIES_DUE_CHANNEL}`);
      await c.query(`LISTEN ${OUTBOX_CHANNEL}`);
      backoffMs = 500;
      // Anything queued while we were not listening.
      handlers.outbox();
      handlers.deliveries();
    } catch (err) {
      ctx.log.warn({ err }, 'worker LISTEN connection failed; relying on polling until it is back');
      reconnect();
    }
  };

  const reconnect = () => {
    if (client) {
      client.removeAllListeners('notification');
      client.release(true);
      client = null;
    }
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void listen();
    }, backoffMs);
    retryTimer.unref();
    backoffMs = Math.min(backoffMs * 2, 30_000);
  };

  void listen();

  return async () => {
    closed = true;
    ctx.events.off('outbox', handlers.outbox);
    ctx.events.off(DELIVERIES_DUE_EVENT, handlers.deliveries);
    ctx.events.off('wake', handlers.clock);
    if (retryTimer) clearTimeout(retryTimer);
    if (client) {
      const c = client;
      client = null;
      // A LISTENing connection is never handed back to the pool: destroy it.
      c.removeAllListeners('notification');
      c.release(true);
    }
  };
}
