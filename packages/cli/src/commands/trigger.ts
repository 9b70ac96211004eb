/**
 * `partner trigger …`: the sandbox simulator (docs/decisions-log.md, 'Sandbox simulator and go-live checklist') through the developer API's simulator routes
 * (`/v1/developer/keys/{id}/sandbox/…`, what the portal's Sandbox page drives), so no API key secret is
 * needed: `--key <id>` names the sandbox key, or the partner's only active sandbox key is used.
 *
 * `partner trigger <event>` makes the marketplace produce that event for the key, as `stripe trigger`
 * does: a test order, and the moves it takes (each move its own webhooks and realtime events).
 */
import type { PartnerOrder, Schemas } from '@partner-logistics/sdk';
import {
  type Command,
  type Context,
  flag,
  intOption,
  type OptionSpec,
  stringOption,
  takes,
  text,
  type Values,
} from '../command.js';
import { CliError } from '../output.js';
import { chooseKey } from './keys.js';
import { orderColumns } from './orders.js';

type OrderStatus = Schemas['OrderStatus'];

const SANDBOX_KEY: Record<string, OptionSpec> = {
  key: text('<id>', 'the sandbox key (default: your only active sandbox key)'),
};

async function sandboxKeyId(ctx: Context, values: Values): Promise<string> {
  return (await chooseKey(ctx, stringOption(values, 'key'), 'SANDBOX')).id;
}

async function createOrders(ctx: Context, keyId: string, body: Schemas['CreateSandboxOrderDto']): Promise<PartnerOrder[]> {
  const created = await ctx.developer().POST('/v1/developer/keys/{id}/sandbox/orders', { params: { path: { id: keyId } }, body });
  return created.items;
}

async function moveOrder(ctx: Context, keyId: string, code: string, status: OrderStatus): Promise<PartnerOrder> {
  return ctx.developer().POST('/v1/developer/keys/{id}/sandbox/orders/{code}/platform-status', {
    params: { path: { id: keyId, code } },
    body: { status },
  });
}

async function moveBatch(
  ctx: Context,
  keyId: string,
  code: string,
  status: 'DISPATCHED' | 'COMPLETED',
): Promise<Schemas['Batch']> {
  return ctx.developer().POST('/v1/developer/keys/{id}/sandbox/batches/{code}/status', {
    params: { path: { id: keyId, code } },
    body: { status },
  });
}

/** What each `partner trigger <event>` does after creating one PACKED test order. */
const SCENARIOS: Record<string, { summary: string; moves: OrderStatus[]; batch?: boolean }> = {
  'order.assigned_to_partner': { summary: 'a new test order assigned to the key', moves: [] },
  'order.status_changed': { summary: 'a test order scanned to the van (PACKED → SCANNED_TO_VAN)', moves: ['SCANNED_TO_VAN'] },
  'order.cancelled': { summary: 'a test order the marketplace cancels', moves: ['CANCELLED'] },
  'order.delivered': {
    summary: 'a test order taken through EN_ROUTE to DELIVERED',
    moves: ['SCANNED_TO_VAN', 'EN_ROUTE', 'DELIVERED'],
  },
  'batch.completed': { summary: 'a van batch of one test order, dispatched and completed', moves: [], batch: true },
};

const scenarioCommands: Command[] = Object.entries(SCENARIOS).map(([event, scenario]) => ({
  path: ['trigger', event],
  summary: `Sandbox: ${scenario.summary}`,
  options: SANDBOX_KEY,
  async run(ctx, values) {
    const keyId = await sandboxKeyId(ctx, values);
    let [order] = await createOrders(ctx, keyId, { status: 'PACKED' });
    const steps = [`created ${order.code} (${order.status})`];
    for (const status of scenario.moves) {
      order = await moveOrder(ctx, keyId, order.code, status);
      steps.push(`moved to ${status}`);
    }
    let batch: Schemas['Batch'] | null = null;
    if (scenario.batch) {
      batch = await ctx.developer().POST('/v1/developer/keys/{id}/sandbox/batches', {
        params: { path: { id: keyId } },
        body: { orderCodes: [order.code] },
      });
      for (const status of ['DISPATCHED', 'COMPLETED'] as const) batch = await moveBatch(ctx, keyId, batch.code, status);
      steps.push(`batch ${batch.code} ${batch.status}`);
    }
    ctx.out.result({ event, apiKeyId: keyId, order, batch }, () => ctx.out.line(`Triggered ${event}: ${steps.join(', ')}`));
  },
}));

export const triggerCommands: Command[] = [
  ...scenarioCommands,
  {
    path: ['trigger', 'order'],
    summary: 'Sandbox: create test orders assigned to the key',
    options: {
      ...SANDBOX_KEY,
      status: text('<status>', 'PLACED, VENDOR_ACCEPTED, RUNNER_PICKUP, AT_HUB or PACKED (default)'),
      payment: text('<COD|CARD>', 'default: either, at random'),
      'no-customer': flag('orders without a customer'),
      count: text('<n>', '1 to 20, default 1'),
    },
    examples: ['partner trigger order --count 5 --payment COD', 'partner trigger order --status PLACED --no-customer'],
    async run(ctx, values) {
      const orders = await createOrders(ctx, await sandboxKeyId(ctx, values), {
        status: stringOption(values, 'status') as Schemas['CreateSandboxOrderDto']['status'],
        paymentMethod: stringOption(values, 'payment')?.toUpperCase() as Schemas['PaymentMethod'] | undefined,
        customer: values['no-customer'] ? false : undefined,
        count: intOption(values, 'count'),
      });
      ctx.out.result({ items: orders }, () => ctx.out.table(orders, orderColumns));
    },
  },
  {
    path: ['trigger', 'move'],
    summary: 'Sandbox: move a test order as the marketplace (VENDOR_ACCEPTED, CANCELLED, EN_ROUTE, RETURNED, …)',
    ...takes('<code>', '<status>'),
    options: SANDBOX_KEY,
    async run(ctx, values, [code, status]) {
      const order = await moveOrder(ctx, await sandboxKeyId(ctx, values), code, status.toUpperCase() as OrderStatus);
      ctx.out.result(order, () => ctx.out.line(`${order.code} is now ${order.status}`));
    },
  },
  {
    path: ['trigger', 'batch'],
    summary: 'Sandbox: put test orders on a van batch',
    args: '<code…>',
    positionals: { min: 1, max: 50 },
    options: SANDBOX_KEY,
    async run(ctx, values, codes) {
      const batch = await ctx.developer().POST('/v1/developer/keys/{id}/sandbox/batches', {
        params: { path: { id: await sandboxKeyId(ctx, values) } },
        body: { orderCodes: codes },
      });
      ctx.out.result(batch, () => ctx.out.line(`Batch ${batch.code} (${batch.status}): ${batch.orderCodes.join(', ')}`));
    },
  },
  {
    path: ['trigger', 'batch-move'],
    summary: 'Sandbox: move a van batch (DISPATCHED, then COMPLETED)',
    ...takes('<code>', '<status>'),
    options: SANDBOX_KEY,
    async run(ctx, values, [code, rawStatus]) {
      const status = rawStatus.toUpperCase();
      if (status !== 'DISPATCHED' && status !== 'COMPLETED') throw new CliError('<status> must be DISPATCHED or COMPLETED', 2);
      const batch = await moveBatch(ctx, await sandboxKeyId(ctx, values), code, status);
      ctx.out.result(batch, () => ctx.out.line(`Batch ${batch.code} is now ${batch.status}`));
    },
  },
  {
    path: ['trigger', 'show'],
    summary: 'Sandbox: the key’s test orders with the moves each allows now',
    options: SANDBOX_KEY,
    async run(ctx, values) {
      const id = await sandboxKeyId(ctx, values);
      const overview = await ctx.developer().GET('/v1/developer/keys/{id}/sandbox', { params: { path: { id } } });
      ctx.out.result(overview, () => {
        ctx.out.table(overview.orders, [
          ['CODE', (o) => o.order.code],
          ['STATUS', (o) => o.order.status],
          ['MARKETPLACE MOVES', (o) => o.platformMoves],
          ['YOUR EVENTS', (o) => o.partnerEvents],
        ]);
        if (overview.batches.length > 0) {
          ctx.out.line('');
          ctx.out.table(overview.batches, [
            ['BATCH', (b) => b.code],
            ['STATUS', (b) => b.status],
            ['ORDERS', (b) => b.orderCodes],
            ['MOVES', (b) => b.moves],
          ]);
        }
      });
    },
  },
];
