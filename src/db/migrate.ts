/**
 * Versioned migrations: `migrations/NNNN_name.sql`, applied in order, each in its own transaction,
 * recorded in `schema_migrations`. An advisory lock lets several processes start at once against one
 * server without applying a migration twice.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.js';

const MIGRATION_LOCK = 727_274_001;

function migrationsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // From src/db (tsx, vitest) or dist/src/db (compiled build): the .sql files live in src/db/migrations.
  for (const candidate of [join(here, 'migrations'), join(here, '../../../src/db/migrations')]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`migrations folder not found near ${here}`);
}

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export function loadMigrations(): Migration[] {
  const dir = migrationsDir();
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ id: Number(f.slice(0, 4)), name: f.slice(5, -4), sql: readFileSync(join(dir, f), 'utf8') }));
}

/** Applies every pending migration; returns the names applied. */
export async function migrate(db: Db): Promise<string[]> {
  const client = await db.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set((await client.query<{ id: number }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id));
    for (const m of loadMigrations()) {
      if (done.has(m.id)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (id, name) VALUES ($1, $2)', [m.id, m.name]);
        await client.query('COMMIT');
        applied.push(`${String(m.id).padStart(4, '0')}_${m.name}`);
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${m.id}_${m.name} failed: ${(err as Error).message}`);
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
  return applied;
}
