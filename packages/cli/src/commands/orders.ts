/** `partner orders …` and `partner events …`: the partner API, with an API key (`--key` or PARTNER_API_KEY). */
import type { PartnerClient, PartnerOrder, Schemas } from '@partner-logistics/sdk';
import {
  type Command,
  type Context,
  flag,
  intOption,
  type OptionSpec,
  PAGE_OPTIONS,
  pageQuery,
  stringOption,
  takes,
  text,
  timeOption,
} from '../command.js';
import { CliError, type Column, localTime } from '../output.js';

export const KEY_OPTION: Record<string, OptionSpec> = {
  key: text('<id>', 'the API key to call with: one this CLI created or rotated (else PARTNER_API_KEY holds the full key)'),
};

/** A command that reads one thing through the partner API by its `<arg>`, with an API key, and shows it. */
export function keyedLookup(
  path: string[],
  summary: string,
  arg: string,
  show: (ctx: Context, partner: PartnerClient, value: string) => Promise<void>,
): Command {
  return {
    path,
    summary,
    ...takes(arg),
    options: KEY_OPTION,
    run: (ctx, values, [value]) => show(ctx, ctx.partner(stringOption(values, 'key')), value),
  };
}

/** A keyed lookup whose answer is printed as a record of `fields` (name, value). */
export function keyedRecord<T>(
  path: string[],
  summary: string,
  arg: string,
  fetch: (partner: PartnerClient, value: string) => Promise<T>,
  fields: ReadonlyArray<Column<T>>,
): Command {
  return keyedLookup(path, summary, arg, async (ctx, partner, value) => {
    const found = await fetch(partner, value);
    ctx.out.result(found, () => ctx.out.record(fields.map(([name, get]) => [name, get(found)])));
  });
}

export const orderColumns: Array<Column<PartnerOrder>> = [
  ['CODE', (o) => o.code],
  ['STATUS', (o) => o.status],
  ['PAYMENT', (o) => o.paymentMethod],
  ['COD', (o) => (o.codAmountQepik ? (o.codAmountQepik / 100).toFixed(2) : '-')],
  ['CUSTOMER', (o) => o.customer?.name],
  ['UPDATED', (o) => localTime(o.updatedAt)],
];

export function printOrder(ctx: Context, order: PartnerOrder): void {
  ctx.out.result(order, () => {
    ctx.out.record([
      ['Code', order.code],
      ['Status', order.status],
      ['Payment', `${order.paymentMethod} (${order.paymentStatus})`],
      ['Total', (order.totalQepik / 100).toFixed(2)],
      ['COD', (order.codAmountQepik / 100).toFixed(2)],
      ['Customer', order.customer ? `${order.customer.name} ${order.customer.phone}` : null],
      ['Batch', order.batch?.code],
      ['Updated', localTime(order.updatedAt)],
    ]);
    ctx.out.line('Timeline:');
    for (const step of order.timeline) ctx.out.line(`  ${localTime(step.at)}  ${step.status}`);
  });
}

const EVENT_TYPES = ['PICKED_UP', 'EN_ROUTE', 'DELIVERED', 'FAILED'] as const;

export const orderCommands: Command[] = [
  {
    path: ['orders', 'list'],
    summary: 'List the orders your key sees, newest first',
    options: {
      ...KEY_OPTION,
      status: text('<STATUS>', 'only this status (PACKED, EN_ROUTE, …)'),
      'updated-since': text('<time>', 'changed at or after (ISO time, or 15m, 2h, 7d ago)'),
      ...PAGE_OPTIONS,
      all: flag('every page (with --json: one array)'),
    },
    examples: [
      'partner orders list --key 3f1c… --status PACKED',
      'PARTNER_API_KEY=svc_sandbox_… partner orders list --all --json',
    ],
    async run(ctx, values) {
      const partner = ctx.partner(stringOption(values, 'key'));
      const query = {
        status: stringOption(values, 'status') as Schemas['OrderStatus'] | undefined,
        updatedSince: timeOption(values, 'updated-since'),
        pageSize: pageQuery(values).pageSize,
      };
      if (values.all) {
        const orders: PartnerOrder[] = [];
        for await (const order of partner.orders({ ...query, pageSize: 50 })) orders.push(order);
        ctx.out.result(orders, () => ctx.out.table(orders, orderColumns, 'No orders'));
        return;
      }
      const page = await partner.listOrders({ ...query, page: pageQuery(values).page });
      ctx.out.pagedResult(page, orderColumns, 'orders');
    },
  },
  keyedLookup(['orders', 'get'], 'One order with its timeline', '<code>', async (ctx, partner, code) =>
    printOrder(ctx, await partner.getOrder(code)),
  ),
  {
    path: ['events', 'post'],
    summary: 'Report what happened to an order: PICKED_UP, EN_ROUTE, DELIVERED or FAILED',
    ...takes('<code>', '<type>'),
    options: {
      ...KEY_OPTION,
      cod: text('<qepik>', 'DELIVERED: cash collected at the door, in qəpik'),
      'fail-reason': text('<reason>', 'FAILED: NOT_HOME, REFUSED, WRONG_ADDRESS, UNREACHABLE or OTHER'),
      note: text('<text>', 'a note (needed with a COD amount that differs)'),
      at: text('<time>', 'when it happened at your side (informational)'),
      'idempotency-key': text('<key>', 'repeat a call safely: the same key answers the first outcome (default: a random one)'),
    },
    examples: [
      'partner events post ORD-1A2B3C PICKED_UP --key 3f1c…',
      'partner events post ORD-1A2B3C DELIVERED --cod 2450 --key 3f1c…',
    ],
    async run(ctx, values, [code, rawType]) {
      const type = rawType.toUpperCase() as (typeof EVENT_TYPES)[number];
      if (!EVENT_TYPES.includes(type)) throw new CliError(`<type> must be one of ${EVENT_TYPES.join(', ')}, not "${rawType}"`, 2);
      const order = await ctx.partner(stringOption(values, 'key')).reportEvent(
        code,
        {
          type,
          codCollectedQepik: intOption(values, 'cod'),
          failReason: stringOption(values, 'fail-reason') as Schemas['DeliveryFailReason'] | undefined,
          note: stringOption(values, 'note'),
          at: timeOption(values, 'at'),
        },
        { idempotencyKey: stringOption(values, 'idempotency-key') },
      );
      ctx.out.result(order, () => ctx.out.line(`${order.code} is now ${order.status}`));
    },
  },
  {
    path: ['events', 'types'],
    summary: 'The webhook event catalog: every kind with what it means',
    async run(ctx) {
      const catalog = await ctx.developer().eventTypes();
      ctx.out.result(catalog, () =>
        ctx.out.table(catalog.items, [
          ['TYPE', (e) => e.type],
          ['DESCRIPTION', (e) => e.description],
        ]),
      );
    },
  },
];
