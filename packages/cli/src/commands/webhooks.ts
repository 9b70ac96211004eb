/** `partner webhooks …` and `partner deliveries …`: the developer API's webhook operations. */
import type { Schemas } from '@partner-logistics/sdk';
import {
  type Command,
  type Context,
  flag,
  intOption,
  listOption,
  PAGE_OPTIONS,
  pageQuery,
  requiredOption,
  stringOption,
  takes,
  text,
  timeOption,
} from '../command.js';
import { CliError, type Column, localTime } from '../output.js';

type Webhook = Schemas['DeveloperWebhook'];
type Delivery = Schemas['DeveloperDelivery'];
type EventKind = Schemas['WebhookEvent'];

const webhookColumns: Array<Column<Webhook>> = [
  ['ID', (w) => w.id],
  ['KEY', (w) => w.apiKeyId],
  ['URL', (w) => w.url],
  ['EVENTS', (w) => w.events],
  ['ACTIVE', (w) => (w.isActive ? 'yes' : 'no')],
  ['DEAD STREAK', (w) => w.consecutiveFailures],
];

const deliveryColumns: Array<Column<Delivery>> = [
  ['ID', (d) => d.id],
  ['EVENT', (d) => d.event],
  ['STATUS', (d) => d.status],
  ['ATTEMPTS', (d) => d.attempts],
  ['LAST ANSWER', (d) => d.lastError ?? d.statusCode],
  ['CREATED', (d) => localTime(d.createdAt)],
  ['NEXT TRY', (d) => localTime(d.nextAttemptAt)],
];

function printWebhook(ctx: Context, webhook: Webhook & { secret?: string; previousSecretExpiresAt?: string }): void {
  ctx.out.result(webhook, () => {
    ctx.out.record([
      ['ID', webhook.id],
      ['Key', webhook.apiKeyId],
      ['URL', webhook.url],
      ['Events', webhook.events],
      ['Active', webhook.isActive ? 'yes' : 'no'],
      ...(webhook.previousSecretExpiresAt
        ? [['Old secret signs until', localTime(webhook.previousSecretExpiresAt)] as [string, unknown]]
        : []),
      ...(webhook.secret ? [['Signing secret', webhook.secret] as [string, unknown]] : []),
    ]);
    if (webhook.secret) ctx.out.note('The signing secret is shown once: keep it where your receiver can read it.');
  });
}

function printDeliveries(ctx: Context, page: Schemas['PageOfDeveloperDelivery']): void {
  ctx.out.pagedResult(page, deliveryColumns, 'deliveries');
}

function onOff(values: Record<string, unknown>): boolean | undefined {
  if (values.enable && values.disable) throw new CliError('give --enable or --disable, not both', 2);
  return values.enable ? true : values.disable ? false : undefined;
}

const recoverCommand = (path: string[]): Command => ({
  path,
  summary: 'Queue again every FAILED or DEAD delivery of a webhook created in a time window',
  ...takes('<webhook-id>'),
  options: {
    since: text('<time>', 'window start: ISO time or 2h, 7d ago (at most 35 days back)'),
    until: text('<time>', 'window end (default now)'),
  },
  examples: [`partner ${path.join(' ')} 7a9e… --since 6h`],
  async run(ctx, values, [id]) {
    const since = timeOption(values, 'since');
    if (!since) throw new CliError('--since is required', 2);
    const queued = await ctx.developer().webhooks.recover(id, { since, until: timeOption(values, 'until') });
    ctx.out.result(queued, () => ctx.out.line(`Queued ${queued.queued} deliveries again`));
  },
});

export const webhookCommands: Command[] = [
  {
    path: ['webhooks', 'list'],
    summary: 'List the webhooks of all your keys',
    async run(ctx) {
      const hooks = await ctx.developer().webhooks.list();
      ctx.out.result(hooks, () => ctx.out.table(hooks.items, webhookColumns, 'No webhooks'));
    },
  },
  {
    path: ['webhooks', 'create'],
    summary: 'Register an endpoint for a key (the signing secret is shown once)',
    options: {
      key: text('<id>', 'the key whose events it gets (needs webhooks:manage)'),
      url: text('<url>', 'https://…, or http://localhost… outside production'),
      events: text('<a,b>', 'event kinds (partner events types); default all'),
    },
    examples: [
      'partner webhooks create --key 3f1c… --url https://you.example.com/hooks --events order.status_changed,order.cancelled',
    ],
    async run(ctx, values) {
      const events = (listOption(values, 'events') as EventKind[] | undefined) ?? (await allEventKinds(ctx));
      const hook = await ctx
        .developer()
        .webhooks.create({ apiKeyId: requiredOption(values, 'key'), url: requiredOption(values, 'url'), events });
      printWebhook(ctx, hook);
    },
  },
  {
    path: ['webhooks', 'update'],
    summary: 'Change a webhook’s URL or events, or switch it on or off',
    ...takes('<id>'),
    options: {
      url: text('<url>', 'a new URL'),
      events: text('<a,b>', 'the new event kinds (replace the old)'),
      enable: flag('switch it on (clears the dead streak)'),
      disable: flag('switch it off (new events are not queued for it)'),
    },
    async run(ctx, values, [id]) {
      const hook = await ctx.developer().webhooks.update(id, {
        url: stringOption(values, 'url'),
        events: listOption(values, 'events') as EventKind[] | undefined,
        isActive: onOff(values),
      });
      printWebhook(ctx, hook);
    },
  },
  {
    path: ['webhooks', 'delete'],
    summary: 'Delete a webhook (its deliveries stop)',
    ...takes('<id>'),
    async run(ctx, _values, [id]) {
      await ctx.developer().webhooks.delete(id);
      ctx.out.result({ deleted: id }, () => ctx.out.line(`Deleted webhook ${id}`));
    },
  },
  {
    path: ['webhooks', 'rotate-secret'],
    summary: 'A new signing secret (shown once); the old one keeps signing during the grace',
    ...takes('<id>'),
    options: { 'grace-hours': text('<h>', '0 to 168, default 24') },
    async run(ctx, values, [id]) {
      const graceHours = intOption(values, 'grace-hours');
      printWebhook(ctx, await ctx.developer().webhooks.rotateSecret(id, graceHours === undefined ? undefined : { graceHours }));
    },
  },
  {
    path: ['webhooks', 'test'],
    summary: 'Send a signed ping, or a sample of any event kind (evt_test_…)',
    ...takes('<id>'),
    options: { event: text('<kind>', 'ping (default) or an event kind') },
    examples: ['partner webhooks test 7a9e… --event order.delivered'],
    async run(ctx, values, [id]) {
      const event = stringOption(values, 'event') as Schemas['TestWebhookDto']['event'] | undefined;
      const delivery = await ctx.developer().webhooks.test(id, event ? { event } : undefined);
      ctx.out.result(delivery, () =>
        ctx.out.line(`Queued ${delivery.event} as delivery ${delivery.id}: partner deliveries get ${delivery.id}`),
      );
    },
  },
  {
    path: ['webhooks', 'health'],
    summary: 'A webhook’s delivery health over the last 24 h',
    ...takes('<id>'),
    async run(ctx, _values, [id]) {
      const h = await ctx.developer().webhooks.health(id);
      ctx.out.result(h, () =>
        ctx.out.record([
          ['Since', localTime(h.since)],
          ['Delivered', h.delivered],
          ['Failed attempts', h.failedAttempts],
          ['Dead', h.dead],
          ['Success rate', h.successRate === null ? null : `${Math.round(h.successRate * 1000) / 10} %`],
          ['p50 / p99', `${h.p50Ms ?? '-'} ms / ${h.p99Ms ?? '-'} ms`],
          ['Last success', localTime(h.lastSuccessAt)],
          ['Last failure', localTime(h.lastFailureAt)],
          ['Dead streak', h.consecutiveFailures],
          ['Active', h.isActive ? 'yes' : 'no'],
        ]),
      );
    },
  },
  {
    path: ['webhooks', 'signing-secret'],
    summary: 'Which form a webhook’s signing secret has (never the secret), and whether to rotate it',
    ...takes('<id>'),
    async run(ctx, _values, [id]) {
      const s = await ctx.developer().webhooks.signingSecret(id);
      ctx.out.result(s, () => {
        ctx.out.record([
          ['Form', s.form],
          ['Rotate', s.rotationSuggested ? `suggested: partner webhooks rotate-secret ${id}` : 'no need'],
        ]);
        if (s.rotationSuggested) {
          ctx.out.note(
            'Secrets of this older form verify X-Partner-Signature and with our SDK, not with Standard Webhooks libraries.',
          );
        }
      });
    },
  },
  recoverCommand(['webhooks', 'recover']),
  {
    path: ['deliveries', 'list'],
    summary: 'A webhook’s deliveries, newest first',
    ...takes('<webhook-id>'),
    options: {
      status: text('<status>', 'PENDING, DELIVERED, FAILED or DEAD'),
      ...PAGE_OPTIONS,
    },
    async run(ctx, values, [id]) {
      const page = await ctx.developer().webhooks.listDeliveries(id, {
        status: stringOption(values, 'status') as Schemas['WebhookDeliveryStatus'] | undefined,
        ...pageQuery(values),
      });
      printDeliveries(ctx, page);
    },
  },
  {
    path: ['deliveries', 'get'],
    summary: 'One delivery: the body as signed and every attempt',
    ...takes('<id>'),
    async run(ctx, _values, [id]) {
      const d = await ctx.developer().deliveries.get(id);
      ctx.out.result(d, () => {
        ctx.out.record([
          ['ID', d.id],
          ['Webhook', d.webhookId],
          ['Event', d.event],
          ['Status', d.status],
          ['Created', localTime(d.createdAt)],
          ['Delivered', localTime(d.deliveredAt)],
          ['Next try', localTime(d.nextAttemptAt)],
        ]);
        ctx.out.line('Attempts:');
        ctx.out.table(d.attempts, [
          ['#', (a) => a.number],
          ['AT', (a) => localTime(a.at)],
          ['ANSWER', (a) => a.error ?? a.statusCode],
          ['MS', (a) => a.durationMs],
        ]);
        ctx.out.line('Payload:');
        ctx.out.line(d.payload);
      });
    },
  },
  {
    path: ['deliveries', 'retry'],
    summary: 'Redeliver one delivery now (same event id, fresh signature)',
    ...takes('<id>'),
    async run(ctx, _values, [id]) {
      const d = await ctx.developer().deliveries.redeliver(id);
      ctx.out.result(d, () => ctx.out.line(`Queued ${d.id} (${d.event}) again`));
    },
  },
  recoverCommand(['deliveries', 'recover']),
];

export async function allEventKinds(ctx: Context): Promise<EventKind[]> {
  const catalog = await ctx.developer().eventTypes();
  return catalog.items.map((e) => e.type).filter((t): t is EventKind => t !== 'ping');
}
