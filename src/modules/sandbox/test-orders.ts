/**
 * Test orders (docs/decisions-log.md, 'Operator API' and 'Sandbox simulator and go-live checklist'): POST /v1/partner/sandbox/orders creates realistic orders already
 * assigned to the calling key, in a status from PLACED to PACKED (default PACKED), so a partner can
 * exercise the whole flow (its events, the marketplace's moves, webhooks included) without an operator.
 *
 * An order created in status X carries the timeline a real order has on reaching X: every status of the
 * platform path from PLACED to X (state-machine.ts `platformPathTo`), each step a platform transition.
 * Like a real order handed to a partner, its creation emits `order.placed` and
 * `order.assigned_to_partner` (the order as it is then), through the operator's own creation statement.
 */
import { randomInt } from 'node:crypto';
import { newId } from '../../shared/ids.js';
import type { LocalizedText, OrderStatus, PaymentMethod } from '../../shared/schemas.js';
import { commitOrderChange } from '../orders/order-change.js';
import type { PartnerCustomer, PartnerOrder } from '../orders/orders.schemas.js';
import { insertNewOrder, type OrdersDeps } from '../orders/orders.service.js';
import { assertPlatformTransition, platformPathTo } from '../orders/state-machine.js';
import { orderAsSeenBy } from '../orders/visibility.js';
import { someZoneIds } from '../orders/zones.repo.js';
import type { CreateSandboxOrderDto } from './sandbox.schemas.js';
import type { SandboxKey } from './sandbox-key.js';

interface Product {
  name: LocalizedText;
  priceQepik: number;
}

const PRODUCTS: Product[] = [
  { name: { az: 'Çay dəsti (6 fincan)', ru: 'Чайный сервиз (6 чашек)', en: 'Tea set (6 cups)' }, priceQepik: 4_590 },
  { name: { az: 'Armudu stəkan', ru: 'Стакан армуду', en: 'Armudu tea glass' }, priceQepik: 350 },
  { name: { az: 'Kişi köynəyi, pambıq', ru: 'Мужская рубашка, хлопок', en: "Men's cotton shirt" }, priceQepik: 3_900 },
  { name: { az: 'Uşaq idman ayaqqabısı', ru: 'Детские кроссовки', en: "Children's sneakers" }, priceQepik: 5_499 },
  { name: { az: 'Xalça, 120×180 sm', ru: 'Ковёр, 120×180 см', en: 'Rug, 120×180 cm' }, priceQepik: 18_900 },
  { name: { az: 'Simsiz qulaqlıq', ru: 'Беспроводные наушники', en: 'Wireless earbuds' }, priceQepik: 7_990 },
  { name: { az: 'Qadın çantası, dəri', ru: 'Женская сумка, кожа', en: "Women's leather handbag" }, priceQepik: 12_500 },
  { name: { az: 'Mətbəx bıçağı dəsti', ru: 'Набор кухонных ножей', en: 'Kitchen knife set' }, priceQepik: 6_450 },
  {
    name: { az: 'Yataq dəsti, ikinəfərlik', ru: 'Постельное бельё, двуспальное', en: 'Double bed linen set' },
    priceQepik: 8_900,
  },
  {
    name: { az: 'Telefon üçün qoruyucu üzlük', ru: 'Защитный чехол для телефона', en: 'Protective phone case' },
    priceQepik: 1_200,
  },
];

const NAMES = ['Aysel Məmmədova', 'Elvin Həsənov', 'Nigar Əliyeva', 'Rauf Quliyev', 'Leyla İsmayılova', 'Tural Abbasov'];

/** Real Baku districts and streets, with coordinates near each street. */
const ADDRESSES: Array<{ area: string; street: string; lat: number; lng: number }> = [
  { area: 'Nəsimi', street: 'Rəşid Behbudov küç. 12', lat: 40.3867, lng: 49.8352 },
  { area: 'Səbail', street: 'Nizami küç. 67', lat: 40.3725, lng: 49.8463 },
  { area: 'Yasamal', street: 'Şərifzadə küç. 140', lat: 40.3931, lng: 49.8089 },
  { area: 'Nərimanov', street: 'Təbriz küç. 44', lat: 40.4038, lng: 49.8706 },
  { area: 'Xətai', street: 'Xətai pr. 29', lat: 40.3826, lng: 49.8839 },
  { area: 'Binəqədi', street: 'Azadlıq pr. 189', lat: 40.4215, lng: 49.8334 },
];

const pick = <T>(list: readonly T[]): T => list[randomInt(list.length)];

/** `n` distinct elements, uniformly (a partial Fisher–Yates shuffle). */
function sample<T>(list: readonly T[], n: number): T[] {
  const copy = [...list];
  for (let i = 0; i < n; i++) {
    const j = i + randomInt(copy.length - i);
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, n);
}

/** A time window later today: starting at the next full hour plus one, two hours long. */
function timeWindow(now: Date): { start: Date; end: Date } {
  const start = new Date(now);
  start.setUTCMinutes(0, 0, 0);
  start.setUTCHours(start.getUTCHours() + 2);
  return { start, end: new Date(start.getTime() + 2 * 3600_000) };
}

/** The statuses of a real order's timeline on reaching `status`, each step checked against the state machine. */
function timelineTo(status: OrderStatus): OrderStatus[] {
  const path = platformPathTo(status);
  if (path === null) throw new Error(`${status} cannot be reached from PLACED`);
  for (let i = 1; i < path.length; i++) assertPlatformTransition(path[i - 1], path[i]);
  return path;
}

/** One realistic order's data: items, totals, a Baku address, a time window later today. */
function testOrderData(paymentMethod: PaymentMethod | undefined, withCustomer: boolean, now: Date) {
  const method: PaymentMethod = paymentMethod ?? (randomInt(2) === 0 ? 'COD' : 'CARD');
  const products = sample(PRODUCTS, 2 + randomInt(2));
  const items = products.map((p) => ({ name: p.name, qty: 1 + randomInt(3), unitPriceQepik: p.priceQepik }));
  const total = items.reduce((sum, item) => sum + item.qty * item.unitPriceQepik, 0);
  const address = pick(ADDRESSES);
  const customer: PartnerCustomer = {
    name: pick(NAMES),
    phone: `+99450${String(randomInt(0, 10_000_000)).padStart(7, '0')}`,
    address: {
      street: address.street,
      details: `Mənzil ${1 + randomInt(120)}, mərtəbə ${1 + randomInt(16)}`,
      lat: Math.round((address.lat + randomInt(-500, 500) / 1e5) * 1e6) / 1e6,
      lng: Math.round((address.lng + randomInt(-500, 500) / 1e5) * 1e6) / 1e6,
    },
  };
  const window = timeWindow(now);
  return {
    paymentMethod: method,
    // A card test order starts awaiting capture (docs/payments.md, "Sandbox"): paid once captured.
    paymentStatus: 'UNPAID',
    totalQepik: total,
    codAmountQepik: method === 'COD' ? total : 0,
    area: address.area,
    timeWindowStart: window.start.toISOString(),
    timeWindowEnd: window.end.toISOString(),
    customer: withCustomer ? customer : null,
    items,
  };
}

/**
 * A realistic unassigned sandbox order in PACKED (the full platform timeline), for sandbox offers
 * (src/modules/offers/): inserted on `tx`, answered with customer (the offer shows none of it).
 */
export async function insertUnassignedTestOrder(
  now: Date,
  zoneIds: string[],
  tx: Parameters<typeof insertNewOrder>[2],
): Promise<PartnerOrder> {
  const statuses = timelineTo('PACKED');
  return insertNewOrder(
    {
      ...testOrderData(undefined, true, now),
      id: newId(),
      environment: 'SANDBOX',
      status: 'PACKED',
      zoneId: zoneIds.length > 0 && randomInt(2) === 0 ? pick(zoneIds) : null,
      assignedKeyId: null,
      partnerAssignedAt: null,
      createdAt: now,
    },
    { statuses, actor: 'SYSTEM' },
    tx,
  );
}

/**
 * Creates `options.count` (default 1) test orders for `key` in one transaction, as the key sees them.
 * The route refuses it on the live listener before calling this.
 */
export async function createTestOrders(
  deps: OrdersDeps,
  key: SandboxKey,
  options: CreateSandboxOrderDto,
): Promise<PartnerOrder[]> {
  const statuses = timelineTo(options.status ?? 'PACKED');
  const count = options.count ?? 1;
  const now = deps.clock.now();
  const snapshots = await commitOrderChange(deps, async (tx) => {
    const zones = await someZoneIds(5, tx);
    const created: PartnerOrder[] = [];
    for (let i = 0; i < count; i++) {
      const zoneId = zones.length > 0 && randomInt(2) === 0 ? pick(zones) : null;
      created.push(
        await insertNewOrder(
          {
            ...testOrderData(options.paymentMethod, options.customer ?? true, now),
            id: newId(),
            environment: 'SANDBOX',
            status: statuses[statuses.length - 1],
            zoneId,
            // A rotated-out key in its grace period acts for its successor: the order goes where it can be seen.
            assignedKeyId: key.actsForKeyId,
            partnerAssignedAt: now,
            createdAt: now,
          },
          { statuses, actor: 'SYSTEM' },
          tx,
        ),
      );
    }
    tx.changed({ environment: 'SANDBOX', keyIds: [key.actsForKeyId] });
    return created;
  });
  return snapshots.map((order) => orderAsSeenBy(key, order));
}
