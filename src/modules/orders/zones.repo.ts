import type { Queryable } from '../../db/db.js';
import type { LocalizedText } from '../../shared/schemas.js';

export interface ZoneRow {
  id: string;
  name: LocalizedText;
}

export async function insertZone(zone: ZoneRow, now: Date, q: Queryable): Promise<void> {
  await q.query('INSERT INTO zones (id, name, created_at) VALUES ($1, $2, $3)', [zone.id, JSON.stringify(zone.name), now]);
}

/** A few zone ids (for the sandbox helper's realistic test orders). */
export async function someZoneIds(limit: number, q: Queryable): Promise<string[]> {
  const rows = await q.query<{ id: string }>('SELECT id FROM zones ORDER BY created_at LIMIT $1', [limit]);
  return rows.map((r) => r.id);
}
