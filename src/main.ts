/**
 * CLI entry.
 *   start                     both listeners (live on PORT, sandbox on SANDBOX_PORT) + the worker
 *   api --env live|sandbox    one listener (scale-out; run workers separately)
 *   worker                    the webhook worker alone
 *   migrate                   apply pending migrations and exit
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { type AppContext, createContext } from './context.js';
import { openDb } from './db/db.js';
import { migrate } from './db/migrate.js';
import { bootstrapAccounts } from './modules/auth/bootstrap.js';
import { acquireRealtimeHub } from './modules/realtime/realtime.hub.js';
import type { ApiKeyEnvironment } from './shared/schemas.js';
import { startWorker, type Worker } from './worker/worker.js';

const SHUTDOWN_TIMEOUT_MS = 8_000;

type Role = { kind: 'start' } | { kind: 'api'; environment: ApiKeyEnvironment } | { kind: 'worker' } | { kind: 'migrate' };

function parseArgs(argv: string[]): Role {
  const [command = 'start', ...rest] = argv;
  if (command === 'start') return { kind: 'start' };
  if (command === 'worker') return { kind: 'worker' };
  if (command === 'migrate') return { kind: 'migrate' };
  if (command === 'api') {
    const i = rest.indexOf('--env');
    const env = i >= 0 ? rest[i + 1] : undefined;
    if (env !== 'live' && env !== 'sandbox') throw new ConfigError('--env', 'must be live or sandbox (api --env live|sandbox)');
    return { kind: 'api', environment: env === 'live' ? 'LIVE' : 'SANDBOX' };
  }
  throw new ConfigError('command', `unknown command "${command}"; use start, api --env live|sandbox, worker or migrate`);
}

async function listen(ctx: AppContext, environment: ApiKeyEnvironment, config: Config): Promise<FastifyInstance> {
  const app = await buildApp(ctx, environment);
  const port = environment === 'LIVE' ? config.port : config.sandboxPort;
  try {
    await app.listen({ port, host: config.host });
  } catch (err) {
    // Named like any other configuration problem (decisions §1).
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      const variable = environment === 'LIVE' ? 'PORT' : 'SANDBOX_PORT';
      throw new ConfigError(
        variable,
        `cannot listen on port ${port} (${code === 'EADDRINUSE' ? 'already in use' : 'not permitted'})`,
      );
    }
    if (code === 'ENOTFOUND' || code === 'EADDRNOTAVAIL' || code === 'EAI_AGAIN') {
      throw new ConfigError('HOST', `cannot listen on ${config.host} (${code})`);
    }
    throw err;
  }
  return app;
}

async function main(): Promise<void> {
  let config: Config;
  let role: Role;
  try {
    config = loadConfig();
    role = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }

  if (role.kind === 'migrate') {
    const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const applied = await migrate(db);
    await db.close();
    process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'Nothing to apply\n');
    return;
  }

  const ctx = await createContext(config);
  await bootstrapAccounts(ctx);
  const apps: FastifyInstance[] = [];
  let worker: Worker | null = null;
  if (role.kind === 'start' || role.kind === 'api') {
    const environments: ApiKeyEnvironment[] = role.kind === 'api' ? [role.environment] : ['LIVE', 'SANDBOX'];
    for (const environment of environments) apps.push(await listen(ctx, environment, config));
  }
  if (role.kind === 'start' || role.kind === 'worker') worker = startWorker(ctx);
  // A worker-only process still publishes realtime events: through Redis to the API processes' sockets.
  const realtime = role.kind === 'worker' && ctx.redis ? acquireRealtimeHub(ctx) : null;
  realtime?.hub.attach();
  ctx.log.info(
    { role: role.kind, database: ctx.db.kind, redis: Boolean(ctx.redis), port: config.port, sandboxPort: config.sandboxPort },
    'started',
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      ctx.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    force.unref();
    try {
      // Stop accepting, let in-flight requests finish, then the worker, then flush and close the database.
      await Promise.all(apps.map((app) => app.close()));
      await worker?.stop();
      await realtime?.release();
      await ctx.close();
      ctx.log.info('stopped');
      process.exit(0);
    } catch (err) {
      ctx.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  // A setting that is well formed but unusable (a database or Redis that cannot be reached, a port in
  // use) is reported like a malformed one: one line naming the variable.
  if (err instanceof ConfigError) process.stderr.write(`Configuration error: ${err.message}\n`);
  else process.stderr.write(`Start-up failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
