/**
 * A LISTEN connection of its own for db.listen (server only): kept up through outages, reported to the
 * database's health like any statement.
 */
import pg from 'pg';
import type { DependencyHealth } from '../dependencies.js';
import { isUnavailableError } from './db-errors.js';

/**
 * A LISTEN connection that outlives outages. It is a client of its own, not one of the pool's (it is
 * held for the life of the process). Errors end it (`onNotListening`); a new one is opened after 250 ms,
 * doubling up to 2 s.
 */
export function startListening(
  config: pg.ClientConfig,
  health: DependencyHealth,
  channels: readonly string[],
  onNotification: (channel: string, payload: string) => void,
  onListening?: () => void,
  onNotListening?: () => void,
): () => Promise<void> {
  let stopped = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let backoffMs = 250;
  const notify = (callback?: () => void) => {
    try {
      callback?.();
    } catch {
      // The caller's catch-up is its own business; listening goes on.
    }
  };

  const retry = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void open();
    }, backoffMs);
    timer.unref();
    backoffMs = Math.min(backoffMs * 2, 2_000);
  };

  const open = async () => {
    if (stopped) return;
    const token = health.begin();
    const c = new pg.Client(config);
    client = c;
    let lost = false;
    const lose = (err: unknown) => {
      if (lost) return;
      lost = true;
      if (client === c) client = null;
      if (isUnavailableError(err)) health.failed(err, token);
      c.end().catch(() => {});
      if (!stopped) notify(onNotListening);
      retry();
    };
    c.on('error', lose);
    c.on('end', () => lose(new Error('Connection terminated unexpectedly')));
    c.on('notification', (msg) => onNotification(msg.channel, msg.payload ?? ''));
    try {
      await c.connect();
      for (const channel of channels) await c.query(`LISTEN ${channel}`);
    } catch (err) {
      lose(err);
      return;
    }
    if (stopped || lost) {
      if (!lost) c.end().catch(() => {});
      return;
    }
    health.succeeded(token);
    backoffMs = 250;
    notify(onListening);
  };

  void open();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    const c = client;
    client = null;
    if (c) {
      c.removeAllListeners('notification');
      c.removeAllListeners('end');
      await c.end().catch(() => {});
    }
  };
}
