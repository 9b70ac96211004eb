/**
 * The database of bench/run.ts's hot paths: PARTNERS × KEYS_EACH keys, the orders they read, the orders
 * the events and webhook scenarios walk, and an operator.
 */
import type { createContext } from '../src/context.js';
import { signAccessToken } from '../src/modules/auth/tokens.js';
import { newId } from '../src/shared/ids.js';
import {
  checkSeededSample,
  type SeedDb,
  type SeededKey,
  seedDb,
  seededCode,
  seedOffers,
  seedOrders,
  seedPartnersAndKeys,
  seedZone,
} from './seed.js';
import { WEBHOOK_ORDERS } from './webhook-fanout.js';

/** Reads are spread over the keys of several partners. */
export const PARTNERS = 5;
export const KEYS_EACH = 20;

export interface Seeded {
  ms: number;
  /** The events and webhook scenarios' key (the first of the read keys). */
  key: string;
  keyId: string;
  partnerId: string;
  readKeys: SeededKey[];
  /** Single-order reads: paths and the key allowed to read each, in step. */
  sample: { paths: string[]; apiKeys: string[] };
  eventCodes: string[];
  webhookCodes: string[];
  /** The offers scenario: open offers to the first key, and the orders its events walk (also the first key's). */
  offers: { ids: string[]; eventCodes: string[] };
  adminToken: string;
}

/**
 * Seeds PARTNERS × KEYS_EACH LIVE keys (every scope, no practical rate limit), ORDERS orders shared
 * among them (order g on key g mod keys), then the events' and webhooks' orders on the first key, in bulk
 * SQL (bench/seed.ts), and an operator; with `offers`, that many unassigned orders each offered to the
 * first key, and `offers.eventOrders` more orders of the first key for the events measured beside them.
 */
export async function seedHotPaths(
  ctx: Awaited<ReturnType<typeof createContext>>,
  url: string | null,
  orders: number,
  eventOrders: number,
  offers: { offers: number; eventOrders: number } = { offers: 0, eventOrders: 0 },
): Promise<Seeded> {
  const t0 = Date.now();
  const now = ctx.clock.now();
  const db: SeedDb = await seedDb(url, ctx.db);
  try {
    const adminId = newId();
    await db.query(`INSERT INTO users (id, phone, role, created_at) VALUES ($1, '+994509999999', 'ADMIN', $2)`, [adminId, now]);
    const keys = await seedPartnersAndKeys(db, PARTNERS, KEYS_EACH, now);
    const zoneId = await seedZone(db, now);
    await seedOrders(db, { from: 1, to: orders }, { keyIds: keys.map((k) => k.id), zoneId, now, progress: true });
    await seedOrders(db, { from: orders + 1, to: orders + eventOrders + WEBHOOK_ORDERS }, { keyIds: [keys[0].id], zoneId, now });
    // The offers scenario's orders: first the offered ones (unassigned), then those its events walk.
    const offersFrom = orders + eventOrders + WEBHOOK_ORDERS + 1;
    const offered = { from: offersFrom, to: offersFrom + offers.offers - 1 };
    const offerEvents = { from: offered.to + 1, to: offered.to + offers.eventOrders };
    let offerIds: string[] = [];
    if (offers.offers > 0) {
      await seedOrders(db, offered, { keyIds: [], zoneId, now });
      offerIds = await seedOffers(db, offered, keys[0], now);
    }
    if (offers.eventOrders > 0) await seedOrders(db, offerEvents, { keyIds: [keys[0].id], zoneId, now });
    await checkSeededSample(db);
    await db.query('ANALYZE');
    const sampleOrders = Array.from({ length: 2000 }, (_, i) => 1 + Math.floor((i * orders) / 2000));
    const eventCodes = Array.from({ length: eventOrders }, (_, i) => seededCode(orders + 1 + i));
    const webhookCodes = Array.from({ length: WEBHOOK_ORDERS }, (_, i) => seededCode(orders + eventOrders + 1 + i));
    const adminToken = await signAccessToken(ctx.secrets.jwtKey, ctx.clock, { userId: adminId, role: 'ADMIN', partnerId: null });
    return {
      ms: Date.now() - t0,
      key: keys[0].key,
      keyId: keys[0].id,
      partnerId: keys[0].partnerId,
      readKeys: keys,
      sample: {
        paths: sampleOrders.map((g) => `/v1/partner/orders/${seededCode(g)}`),
        apiKeys: sampleOrders.map((g) => keys[g % keys.length].key),
      },
      eventCodes,
      webhookCodes,
      offers: {
        ids: offerIds,
        eventCodes: Array.from({ length: offers.eventOrders }, (_, i) => seededCode(offerEvents.from + i)),
      },
      adminToken,
    };
  } finally {
    await db.close();
  }
}
