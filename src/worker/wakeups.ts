/**
 * What wakes the worker besides its poll: in-process events, and on a PostgreSQL server LISTEN on a
 * dedicated connection (db.listen), so a delivery queued by an API process is attempted by a worker
 * process within milliseconds. A lost LISTEN connection is re-established by db.listen with a short
 * backoff; meanwhile the poll keeps everything moving, only a little later.
 */
import type { AppContext } from '../context.js';
import { DELIVERIES_DUE_CHANNEL } from '../modules/webhooks/signals.js';
import { OUTBOX_CHANNEL } from '../shared/outbox.js';

export interface WakeHandlers {
  outbox: () => void;
  deliveries: () => void;
  /** The test clock moved: things may have come due, or expired. */
  clock: () => void;
}

export function subscribeWakeups(ctx: AppContext, handlers: WakeHandlers): () => Promise<void> {
  ctx.events.on('outbox', handlers.outbox);
  ctx.events.on('webhooks.due', handlers.deliveries);
  ctx.events.on('wake', handlers.clock);

  const stopListening = ctx.db.listen(
    [DELIVERIES_DUE_CHANNEL, OUTBOX_CHANNEL],
    (channel) => {
      if (channel === OUTBOX_CHANNEL) handlers.outbox();
      else handlers.deliveries();
    },
    // Listening (again): anything queued while we were not.
    () => {
      handlers.outbox();
      handlers.deliveries();
    },
  );

  return async () => {
    ctx.events.off('outbox', handlers.outbox);
    ctx.events.off('webhooks.due', handlers.deliveries);
    ctx.events.off('wake', handlers.clock);
    await stopListening();
  };
}
