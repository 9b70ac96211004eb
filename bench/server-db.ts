/** A throw-away database on the PostgreSQL server of DATABASE_URL, for one benchmark run. */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export async function freshServerDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('--db=server needs DATABASE_URL');
  const name = `bench_${Date.now()}_${randomUUID().slice(0, 8)}`;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const c = new pg.Client({ connectionString: admin.toString() });
  await c.connect();
  await c.query(`CREATE DATABASE "${name}"`);
  await c.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const d = new pg.Client({ connectionString: admin.toString() });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await d.end();
    },
  };
}
