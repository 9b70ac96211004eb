/**
 * The sandbox helper (decisions §3): POST /v1/partner/sandbox/orders creates a realistic test order
 * already assigned to the calling key, in status PACKED, so a partner can exercise the whole flow
 * (PICKED_UP → EN_ROUTE → DELIVERED / FAILED, webhooks included) without an operator.
 */
import { randomInt } from 'node:crypto';
import { newId } from '../../shared/ids.js';
import type { LocalizedText, PaymentMethod } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key-resolver.js';
import { commitOrderChange } from './order-change.js';
import type { PartnerCustomer, PartnerOrder } from './orders.schemas.js';
import { insertNewOrder, type OrdersDeps } from './orders.service.js';
import { orderAsSeenBy } from './visibility.js';
import { someZoneIds } from './zones.repo.js';

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

/** POST /v1/partner/sandbox/orders (the route refuses it on the live listener before calling this). */
export async function createSandboxOrder(
  deps: OrdersDeps,
  key: ResolvedKey,
  paymentMethod: PaymentMethod | undefined,
): Promise<PartnerOrder> {
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
  const now = deps.clock.now();
  const window = timeWindow(now);
  const snapshot = await commitOrderChange(deps, async (tx) => {
    const zones = await someZoneIds(5, tx);
    const zoneId = zones.length > 0 && randomInt(2) === 0 ? pick(zones) : null;
    const order = await insertNewOrder(
      {
        id: newId(),
        environment: 'SANDBOX',
        status: 'PACKED',
        paymentMethod: method,
        paymentStatus: method === 'CARD' ? 'PAID' : 'UNPAID',
        totalQepik: total,
        codAmountQepik: method === 'COD' ? total : 0,
        area: address.area,
        zoneId,
        timeWindowStart: window.start.toISOString(),
        timeWindowEnd: window.end.toISOString(),
        customer,
        // A rotated-out key in its grace period acts for its successor: the order goes where it can be seen.
        assignedKeyId: key.actsForKeyId,
        partnerAssignedAt: now,
        items,
        createdAt: now,
      },
      { statuses: ['PLACED', 'VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED'], actor: 'SYSTEM' },
      tx,
    );
    tx.changed({ environment: 'SANDBOX', keyIds: [key.actsForKeyId] });
    return order;
  });
  return orderAsSeenBy(key, snapshot);
}
