/**
 * Who is woken when outbox rows commit (src/shared/outbox.ts, "Waking"): a process with no consumer of
 * its own (an `api` process) wakes the workers of other processes with NOTIFY partner_api_outbox; a
 * process whose worker runs fans its own commits out, woken in-process, and sends no NOTIFY. Server
 * mode only: the embedded database has one process and no NOTIFY at all. (That the NOTIFY reaches a
 * listener on commit only: src/modules/orders/admin-order-create.test.ts.)
 */
import { expect, it } from 'vitest';
import { GatedDb, textOf } from '../../test/gated-db.js';
import type { TestApp } from '../../test/harness.js';
import { setUpTestAppWithOperator } from '../../test/test-app-per-file.js';
import { type Auth, createOrder } from '../modules/orders/orders.test-helpers.js';
import { OUTBOX_CHANNEL } from '../shared/outbox.js';
import { startWorker } from './worker.js';

/** Counts the wake-up NOTIFYs the process asks for (the wake-up is sent before a change is answered). */
class WakeUpCounter extends GatedDb {
  wakeUps = 0;

  override query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]> {
    if (params?.[0] === OUTBOX_CHANNEL && textOf(text).includes('pg_notify')) this.wakeUps++;
    return super.query<R>(text, params);
  }
}

let t: TestApp;
let admin: Auth;
let db: WakeUpCounter;
setUpTestAppWithOperator(
  (app, operator) => {
    t = app;
    admin = operator;
  },
  {
    wrapDb: (inner) => {
      db = new WakeUpCounter(inner);
      return db;
    },
  },
);

it.runIf(process.env.DATABASE_URL)(
  'is a NOTIFY from a process without a worker, none from a process whose worker runs, and again once it stops',
  async () => {
    await createOrder(t, admin);
    expect(db.wakeUps).toBe(1);

    // A poll far away: only the in-process wake-up can fan the new order's row out in time.
    const worker = startWorker(t.ctx, { pollIntervalMs: 60_000 });
    try {
      const order = await createOrder(t, admin);
      expect(db.wakeUps).toBe(1);
      await expect
        .poll(async () => {
          const [row] = await t.ctx.db.query<{ processed: boolean }>(
            `SELECT bool_and(o.processed_at IS NOT NULL) AS processed
               FROM outbox o JOIN orders r ON r.id = o.order_id WHERE r.code = $1`,
            [order.code],
          );
          return row.processed;
        })
        .toBe(true);
    } finally {
      await worker.stop();
    }

    await createOrder(t, admin);
    expect(db.wakeUps).toBe(2);
  },
);
