/**
 * Redis clients (docs/decisions-log.md, 'Dependency faults': Redis is an accelerator, never a single point of failure).
 *
 * Every call has a deadline and nothing waits for Redis to come back:
 *  - no offline queue: a command sent while the connection is down fails at once (the caller falls
 *    back) instead of waiting in a queue for a reconnect;
 *  - `commandTimeout` 250 ms: a command Redis does not answer fails after 250 ms;
 *  - except what is sent while a connection is still starting up (ioredis's handshake and ready check):
 *    REDIS_HANDSHAKE_TIMEOUT_MS, 1 s. No request waits for it (request commands fail at once until the
 *    connection is ready), and with 250 ms a loaded host could fail the handshake of every reconnect
 *    after an outage (the reply read a little late), so the connection, and the Redis health, never
 *    came back;
 *  - `socketTimeout` 1 s: a connection that answers nothing for a second while a command waits (a
 *    network partition) is dropped, so later commands fail at once rather than after 250 ms each;
 *  - `maxRetriesPerRequest` 0: commands caught by a disconnect fail instead of being sent again later;
 *  - reconnects every 100 ms to 1 s (and 1 s to connect), so shared behaviour resumes within about a
 *    second of Redis answering again.
 * Subscriber connections are the exception: their SUBSCRIBE commands wait for the connection (they
 * cost no request anything), so a subscription is never lost to an outage.
 *
 * Nothing a client does can end the process: every client has an 'error' listener, and every command's
 * promise has a rejection handler attached as it is sent (ioredis itself sends commands nobody awaits:
 * re-subscriptions after a reconnect; so does the Socket.IO adapter: every PUBLISH), so no rejection is
 * ever unhandled. Callers that await a command still see its rejection.
 *
 * The main (command) client also keeps `health` (dependencies.ts): a command failing because Redis is
 * unreachable marks it down, a later command answering (or a reconnect completing) marks it up. While it
 * is down and the connection is open, the client sends a PING every REDIS_PROBE_INTERVAL_MS: a process
 * whose requests send Redis nothing for seconds (a key's rate-limit slice lasts 5 s) still finds Redis
 * back within a fraction of a second, and a command that only missed its deadline because this process
 * was starved of CPU (the reply arrived, the event loop read it late) ends the outage it began at once.
 */
import { type Command, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { ConfigError } from './config.js';
import { type DependencyHealth, isDependencyError, reasonOf } from './dependencies.js';

/** docs/decisions-log.md, 'Dependency faults': every Redis call has a deadline of at most 250 ms. */
export const REDIS_COMMAND_TIMEOUT_MS = 250;
/** The deadline of a connection's handshake commands (see the top of the file): the socket timeout's. */
export const REDIS_HANDSHAKE_TIMEOUT_MS = 1_000;
/** While Redis is marked down and the connection is open, a PING this often (see the top of the file). */
export const REDIS_PROBE_INTERVAL_MS = 200;

const COMMAND_OPTIONS: RedisOptions = {
  lazyConnect: true,
  enableOfflineQueue: false,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  socketTimeout: 1_000,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 1_000,
  keepAlive: 5_000,
  retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
};

const SUBSCRIBER_OPTIONS: RedisOptions = {
  enableOfflineQueue: true,
  commandTimeout: undefined,
  maxRetriesPerRequest: null,
  autoResendUnfulfilledCommands: true,
};

interface Sending {
  sendCommand(command: Command, stream?: unknown): Promise<unknown>;
}

/**
 * Attaches a rejection handler to every command the client sends (see the top of the file), and with
 * `health` reports each command's outcome to it.
 */
function guardCommands(client: Redis, health?: DependencyHealth): void {
  const target = client as unknown as Sending;
  const sendNow = target.sendCommand.bind(client);
  // A command's first deadline is the one it keeps (ioredis sets commandTimeout only on a command without one).
  const send: Sending['sendCommand'] = (command, stream) => {
    if (client.status === 'connect') command.setTimeout(REDIS_HANDSHAKE_TIMEOUT_MS);
    return sendNow(command, stream);
  };
  if (!health) {
    target.sendCommand = (command, stream) => {
      const sent = send(command, stream);
      sent.catch(() => {});
      return sent;
    };
    return;
  }
  target.sendCommand = (command, stream) => {
    const token = health.begin();
    const sent = send(command, stream);
    sent.then(
      // A command answered while the connection is still starting up (ioredis lets a few through before
      // its ready check) is not yet proof: the 'ready' event is.
      () => {
        if (client.status === 'ready') health.succeeded(token);
      },
      (err: unknown) => {
        if (isDependencyError(err)) health.failed(err, token);
      },
    );
    return sent;
  };
}

/**
 * The events of a client: connection errors of the main client mark `health` down (its outages are
 * logged once, by whoever watches `health`); those of the other clients are only written at debug level,
 * since they report the same outage.
 */
function watchClient(client: Redis, log: Logger, name: string, health?: DependencyHealth): void {
  let quitting = false;
  const quit = client.quit.bind(client);
  client.quit = ((...args: Parameters<Redis['quit']>) => {
    quitting = true;
    return quit(...args);
  }) as Redis['quit'];
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect?: boolean) => {
    if (!reconnect) quitting = true;
    disconnect(reconnect);
  };
  client.on('error', (err: Error) => {
    if (health && !quitting) health.failed(err);
    else log.debug({ client: name, reason: reasonOf(err) }, 'Redis connection error');
  });
  client.on('close', () => {
    if (health && !quitting) health.failed(new Error('Connection is closed'));
  });
  if (health) client.on('ready', () => health.succeeded());
}

/** Connects the main client, or names REDIS_URL (start-up needs Redis once: docs/decisions-log.md, 'Processes and configuration'). */
export async function connectRedis(url: string, log: Logger, health: DependencyHealth): Promise<Redis> {
  const redis = new Redis(url, COMMAND_OPTIONS);
  let firstError: Error | null = null;
  const remember = (err: Error) => {
    firstError ??= err;
  };
  redis.on('error', remember);
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    // connect() rejects with "Connection is closed."; the socket's own error says why.
    throw new ConfigError('REDIS_URL', `cannot connect to Redis (${reasonOf(firstError ?? err)})`);
  }
  redis.off('error', remember);
  guardCommands(redis, health);
  watchClient(redis, log, 'main', health);
  probeWhileDown(redis, health);
  return redis;
}

/**
 * While `health` is down, PINGs `client` every REDIS_PROBE_INTERVAL_MS once its connection is open (one
 * at a time): its answer, a command begun after the outage did, ends the outage (see the top of the file).
 */
function probeWhileDown(client: Redis, health: DependencyHealth): void {
  let timer: NodeJS.Timeout | null = null;
  let probing = false;
  const probe = () => {
    if (probing || client.status !== 'ready') return;
    probing = true;
    client
      .ping()
      .catch(() => {})
      .finally(() => {
        probing = false;
      });
  };
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = null;
  };
  health.onChange((change) => {
    if (change.available) return stop();
    timer ??= setInterval(probe, REDIS_PROBE_INTERVAL_MS);
    timer.unref();
  });
  client.once('end', stop);
}

/**
 * Another connection to the same Redis, for one use: `subscriber` for SUBSCRIBE connections (their
 * commands wait for the connection), otherwise a command connection like the main one.
 */
export function duplicateRedis(redis: Redis, log: Logger, name: string, options: { subscriber?: boolean } = {}): Redis {
  // Connected at once: a command connection without an offline queue refuses commands until it is.
  const client = redis.duplicate({ ...COMMAND_OPTIONS, lazyConnect: false, ...(options.subscriber ? SUBSCRIBER_OPTIONS : {}) });
  guardCommands(client);
  watchClient(client, log, name);
  return client;
}
