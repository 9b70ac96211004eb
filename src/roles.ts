/**
 * What each process role starts (docs/decisions-log.md, 'Processes and configuration'), apart from the CLI around it (main.ts): parsing the
 * role from the command line, starting it on a loaded configuration, and stopping it again. Kept out of
 * main.ts so that start-up can be exercised in process (tests) without spawning a child.
 *
 * A start that fails half way closes what it had opened (listeners, worker, database, Redis) before the
 * error reaches the caller, so an in-process caller is left with nothing running.
 */
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { type Config, ConfigError } from './config.js';
import { type AppContext, createContext } from './context.js';
import { type MetricsServer, startMetricsServer } from './metrics/metrics-server.js';
import { bootstrapAccounts } from './modules/auth/bootstrap.js';
import { type ApiKeyEnvironment, environmentOf } from './shared/schemas.js';
import { startWorker, type Worker } from './worker/worker.js';

export type Role = { kind: 'start' } | { kind: 'api'; environment: ApiKeyEnvironment } | { kind: 'worker' } | { kind: 'migrate' };

export function parseArgs(argv: string[]): Role {
  const [command = 'start', ...rest] = argv;
  if (command === 'start') return { kind: 'start' };
  if (command === 'worker') return { kind: 'worker' };
  if (command === 'migrate') return { kind: 'migrate' };
  if (command === 'api') {
    const i = rest.indexOf('--env');
    const env = i >= 0 ? rest[i + 1] : undefined;
    if (env !== 'live' && env !== 'sandbox') throw new ConfigError('--env', 'must be live or sandbox (api --env live|sandbox)');
    return { kind: 'api', environment: environmentOf(env) };
  }
  throw new ConfigError('command', `unknown command "${command}"; use start, api --env live|sandbox, worker or migrate`);
}

/** A started role: its context, its listeners (with the ports they really got) and how to stop it. */
export interface RunningRole {
  ctx: AppContext;
  apps: FastifyInstance[];
  /** The port each listener is bound to (PORT=0 lets the system choose). */
  ports: Partial<Record<ApiKeyEnvironment, number>>;
  /** The port of this process's `/metrics` listener, or null when METRICS_PORT is off. */
  metricsPort: number | null;
  /**
   * The start of a rolling restart's stop (docs/operating.md, "Restarts"): /readyz answers 503 from now
   * on, so the load balancer takes the process out, while every request keeps being served as before.
   */
  drain(): void;
  /** Stops accepting, lets requests in flight finish, stops the worker, flushes and closes the database. */
  stop(): Promise<void>;
}

type Listener = ApiKeyEnvironment | 'METRICS';

/** A listen error named like any other configuration problem (docs/decisions-log.md, 'Processes and configuration'), or the error itself. */
function listenFailure(err: unknown, listener: Listener, port: number, config: Config): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE' || code === 'EACCES') {
    const variable = listener === 'LIVE' ? 'PORT' : listener === 'SANDBOX' ? 'SANDBOX_PORT' : 'METRICS_PORT';
    return new ConfigError(
      variable,
      `cannot listen on port ${port} (${code === 'EADDRINUSE' ? 'already in use' : 'not permitted'})`,
    );
  }
  if (code === 'ENOTFOUND' || code === 'EADDRNOTAVAIL' || code === 'EAI_AGAIN') {
    return new ConfigError('HOST', `cannot listen on ${config.host} (${code})`);
  }
  return err;
}

const portOf = (listener: Listener, config: Config) =>
  listener === 'LIVE' ? config.port : listener === 'SANDBOX' ? config.sandboxPort : (config.metricsPort ?? 0);

/**
 * Checks, before anything is opened, that each listener's address can be bound: a port in use or a
 * host that does not exist fails start-up in milliseconds, not after the database has been opened and
 * migrated (which takes seconds on the embedded database, more on a busy machine). The real listen
 * still maps its own errors: another process may take the port in between.
 */
async function checkListenable(listeners: Listener[], config: Config): Promise<void> {
  for (const environment of listeners) {
    const port = portOf(environment, config);
    if (port === 0) continue;
    const probe = createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port, host: config.host, exclusive: true }, () => probe.close(() => resolve()));
    }).catch((err: unknown) => {
      throw listenFailure(err, environment, port, config);
    });
  }
}

async function listen(ctx: AppContext, environment: ApiKeyEnvironment, config: Config): Promise<FastifyInstance> {
  const app = await buildApp(ctx, environment);
  const port = portOf(environment, config);
  try {
    await app.listen({ port, host: config.host });
  } catch (err) {
    await app.close().catch(() => {});
    throw listenFailure(err, environment, port, config);
  }
  return app;
}

/** Starts a serving role (start, api, worker); `migrate` is not one. */
export async function startRole(config: Config, role: Exclude<Role, { kind: 'migrate' }>): Promise<RunningRole> {
  const environments: ApiKeyEnvironment[] =
    role.kind === 'api' ? [role.environment] : role.kind === 'start' ? ['LIVE', 'SANDBOX'] : [];
  await checkListenable(config.metricsPort === null ? environments : [...environments, 'METRICS'], config);
  const ctx = await createContext(config);
  const apps: FastifyInstance[] = [];
  const ports: RunningRole['ports'] = {};
  let worker: Worker | null = null;
  let metricsServer: MetricsServer | null = null;
  const stop = async () => {
    await Promise.all(apps.map((app) => app.close()));
    await metricsServer?.close();
    await worker?.stop();
    await ctx.close();
  };
  try {
    await bootstrapAccounts(ctx);
    for (const environment of environments) {
      const app = await listen(ctx, environment, config);
      apps.push(app);
      const address = app.server.address();
      if (address && typeof address === 'object') ports[environment] = address.port;
    }
    if (role.kind === 'start' || role.kind === 'worker') worker = startWorker(ctx);
    // A worker-only process still publishes realtime events: through Redis to the API processes' sockets.
    if (role.kind === 'worker' && ctx.redis) ctx.realtime.attach();
    // Each process serves its own metrics (docs/operating.md, "Metrics"), once everything it counts runs.
    if (ctx.metrics && config.metricsPort !== null) {
      const port = config.metricsPort;
      metricsServer = await startMetricsServer(ctx.metrics, config.host, port, ctx.log).catch((err: unknown) => {
        throw listenFailure(err, 'METRICS', port, config);
      });
    }
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  const drain = () => {
    ctx.events.emit('draining');
  };
  return { ctx, apps, ports, metricsPort: metricsServer?.port ?? null, drain, stop };
}

/** The one line a failed start-up prints (docs/decisions-log.md, 'Processes and configuration'): a configuration problem names its variable. */
export function startupFailureLine(err: unknown): string {
  if (err instanceof ConfigError) return `Configuration error: ${err.message}`;
  return `Start-up failed: ${err instanceof Error ? err.message : String(err)}`;
}
