/**
 * CLI entry.
 *   start                     both listeners (live on PORT, sandbox on SANDBOX_PORT) + the worker
 *   api --env live|sandbox    one listener (scale-out; run workers separately)
 *   worker                    the webhook worker alone
 *   migrate                   apply pending migrations and exit
 * What each role starts is in roles.ts; this file reads the command line, handles signals and keeps
 * the process-level last line of defence against dependency errors (dependencies.ts,
 * installLastLineOfDefence): a dependency error that escapes every handler is logged and the process
 * goes on; any other unhandled rejection or uncaught exception is logged and ends the process (exit 1),
 * as Node would. Every client has its own error handling; this is only the net under it.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { type Config, loadConfig } from './config.js';
import { openDb } from './db/db.js';
import { migrate } from './db/migrate.js';
import { installLastLineOfDefence } from './dependencies.js';
import { createLogger } from './logger.js';
import { parseArgs, type Role, startRole, startupFailureLine } from './roles.js';

const SHUTDOWN_TIMEOUT_MS = 8_000;

async function main(): Promise<void> {
  let config: Config;
  let role: Role;
  try {
    config = loadConfig();
    role = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${startupFailureLine(err)}\n`);
    process.exit(1);
  }
  installLastLineOfDefence(process, createLogger(config.logLevel));

  if (role.kind === 'migrate') {
    const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const applied = await migrate(db);
    await db.close();
    process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'Nothing to apply\n');
    return;
  }

  const running = await startRole(config, role);
  const { ctx } = running;
  ctx.log.info(
    {
      role: role.kind,
      database: ctx.db.kind,
      redis: Boolean(ctx.redis),
      port: running.ports.LIVE ?? config.port,
      sandboxPort: running.ports.SANDBOX ?? config.sandboxPort,
      metricsPort: running.metricsPort,
    },
    'started',
  );

  // A rolling restart (docs/operating.md, "Restarts"): a process with listeners first drains for
  // SHUTDOWN_DRAIN_MS (/readyz answers 503, everything else is served as before) so the load balancer
  // takes it out before its listeners close; then it stops accepting, finishes the requests in flight,
  // stops its worker (attempts under way finish or give their lease back), flushes the request log and
  // usage, and exits. A second signal meanwhile changes nothing.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const drainMs = running.apps.length > 0 ? config.shutdownDrainMs : 0;
    ctx.log.info({ signal, drainMs }, drainMs > 0 ? 'draining: /readyz answers 503 until the listeners close' : 'shutting down');
    if (drainMs > 0) {
      running.drain();
      await sleep(drainMs);
      ctx.log.info('shutting down');
    }
    const force = setTimeout(() => {
      ctx.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    force.unref();
    try {
      await running.stop();
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
  process.stderr.write(`${startupFailureLine(err)}\n`);
  process.exit(1);
});
