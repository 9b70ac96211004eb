/**
 * Runs once per `vitest run` for each tier that needs a database (api, e2e: vitest.config.ts), before its
 * files start: prepares a migrated database template so that every test file gets a fresh database in
 * well under a second instead of running initdb and the migrations again.
 *  - embedded (no DATABASE_URL): a PGlite data-dir dump, cached on disk by migration content;
 *  - server (DATABASE_URL): a template database per tier; each file clones it with CREATE DATABASE … TEMPLATE.
 * The unit tier has no global set-up at all (docs/testing.md, 'Tiers').
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { dbFromPglite, openDb } from '../src/db/db.js';
import { loadMigrations, migrate } from '../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    serverTemplate: string;
  }
}

function migrationsHash(): string {
  const h = createHash('sha256');
  for (const m of loadMigrations()) h.update(`${m.id}:${m.name}:${m.sql}`);
  return h.digest('hex').slice(0, 16);
}

export function adminUrl(databaseUrl: string, database = 'postgres'): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function prepareEmbedded(): Promise<string> {
  const dir = join(process.cwd(), 'node_modules', '.cache', 'partner-api');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `pglite-template-${migrationsHash()}.tar`);
  if (existsSync(file)) return file;
  const pglite = await PGlite.create('memory://');
  const db = dbFromPglite(pglite);
  await migrate(db);
  const dump = await pglite.dumpDataDir('none');
  await db.close();
  // Two tiers of one run may prepare it at the same time: each writes its own file, the rename is atomic.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
  renameSync(tmp, file);
  return file;
}

async function prepareServer(databaseUrl: string, tier: string): Promise<{ template: string; cleanup: () => Promise<void> }> {
  const base = new URL(databaseUrl).pathname.slice(1) || 'test';
  // One template per tier: the api and e2e tiers of one run set up and tear down independently.
  const template = `${base}_tmpl_${tier}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl(databaseUrl) });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${template}"`);
  await admin.query(`CREATE DATABASE "${template}"`);
  const db = await openDb({ databaseUrl: adminUrl(databaseUrl, template), dataDir: '' });
  await migrate(db);
  await db.close();
  await admin.end();
  return {
    template,
    cleanup: async () => {
      const c = new pg.Client({ connectionString: adminUrl(databaseUrl) });
      await c.connect();
      // Only this run's file databases (harness.ts names them after the template): several runs may
      // share a server, and dropping another run's databases would fail its tests mid-way.
      const rows = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [
        `${template}_f_`,
      ]);
      for (const { datname } of rows.rows) await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => {});
      await c.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`).catch(() => {});
      await c.end();
    },
  };
}

export default async function setup(project: TestProject) {
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    const { template, cleanup } = await prepareServer(databaseUrl, project.name.replace(/\W/g, '_'));
    project.provide('serverTemplate', template);
    project.provide('pgliteTemplate', '');
    return cleanup;
  }
  project.provide('pgliteTemplate', await prepareEmbedded());
  project.provide('serverTemplate', '');
  return undefined;
}
