import { newId } from '../../shared/ids.js';
import type { LocalizedText } from '../../shared/schemas.js';
import type { OrdersDeps } from './orders.service.js';
import { insertZone, type ZoneRow } from './zones.repo.js';

/** POST /v1/admin/zones. */
export async function createZone(deps: OrdersDeps, name: LocalizedText): Promise<ZoneRow> {
  const zone = { id: newId(), name: { az: name.az, ru: name.ru, en: name.en } };
  await insertZone(zone, deps.clock.now(), deps.db);
  return zone;
}
