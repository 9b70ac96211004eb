/** `partner keys …`: list, create, rotate, revoke, usage, checklist. */
import type { Schemas } from '@partner-logistics/sdk';
import { type Command, intOption, listOption, requiredOption, stringOption, takes, text } from '../command.js';
import { CliError, type Column, localTime } from '../output.js';

type Key = Schemas['DeveloperKey'];
type Scope = Schemas['ApiKeyScope'];

const DEFAULT_SCOPES: Scope[] = ['orders:read', 'logistics:write', 'webhooks:manage'];

export function environmentOption(value: string | undefined): 'LIVE' | 'SANDBOX' {
  const env = (value ?? 'sandbox').toUpperCase();
  if (env !== 'LIVE' && env !== 'SANDBOX') throw new CliError(`--env must be live or sandbox, not "${value}"`, 2);
  return env;
}

export const keyColumns = (kept: (id: string) => boolean): Array<Column<Key>> => [
  ['ID', (k) => k.id],
  ['NAME', (k) => k.name],
  ['ENV', (k) => k.environment.toLowerCase()],
  ['PREFIX', (k) => k.prefix],
  ['SCOPES', (k) => k.scopes],
  ['STATUS', (k) => (!k.isActive ? 'revoked' : k.revokedAt ? `rotated, works until ${localTime(k.revokedAt)}` : 'active')],
  ['LAST USED', (k) => localTime(k.lastUsedAt)],
  ['SECRET HERE', (k) => (kept(k.id) ? 'yes' : 'no')],
];

/** Prints a key that carries its full value (created or rotated) and keeps the value for `--key`. */
function keepNewKey(
  ctx: Parameters<Command['run']>[0],
  key: Schemas['DeveloperKeyCreated'],
  extra: Array<[string, unknown]> = [],
) {
  ctx.store.writeKey(key.id, {
    key: key.key,
    name: key.name,
    environment: key.environment,
    apiUrl: ctx.endpoints.apiUrl,
    savedAt: new Date().toISOString(),
  });
  ctx.out.result(key, () => {
    ctx.out.record([
      ['ID', key.id],
      ['Name', key.name],
      ['Environment', key.environment.toLowerCase()],
      ['Scopes', key.scopes],
      ...extra,
      ['Key', key.key],
    ]);
    ctx.out.note(`The full key is shown once; this CLI keeps it in ${ctx.store.dir}/keys.json for --key ${key.id}.`);
  });
}

export const keyCommands: Command[] = [
  {
    path: ['keys', 'list'],
    summary: 'List your API keys (revoked ones included)',
    async run(ctx) {
      const keys = await ctx.developer().keys.list();
      const kept = ctx.store.keys();
      ctx.out.result(keys, () =>
        ctx.out.table(
          keys.items,
          keyColumns((id) => id in kept),
          'No keys yet: partner keys create --name <name>',
        ),
      );
    },
  },
  {
    path: ['keys', 'create'],
    summary: 'Create an API key; the full key is shown once and kept by this CLI for --key',
    options: {
      name: text('<name>', '2 to 60 characters'),
      env: text('<sandbox|live>', 'default sandbox'),
      scopes: text(
        '<a,b>',
        `orders:read, orders:pii, logistics:write, webhooks:manage, payments:read (default ${DEFAULT_SCOPES.join(',')})`,
      ),
    },
    examples: [
      'partner keys create --name Dispatch',
      'partner keys create --name Prod --env live --scopes orders:read,orders:pii,logistics:write',
    ],
    async run(ctx, values) {
      const key = await ctx.developer().keys.create({
        name: requiredOption(values, 'name'),
        environment: environmentOption(stringOption(values, 'env')),
        scopes: (listOption(values, 'scopes') as Scope[] | undefined) ?? DEFAULT_SCOPES,
      });
      keepNewKey(ctx, key);
    },
  },
  {
    path: ['keys', 'rotate'],
    summary: 'Rotate a key: a new key (shown once, kept here) takes over; the old one works 24 h more',
    ...takes('<id>'),
    async run(ctx, _values, [id]) {
      const rotated = await ctx.developer().keys.rotate(id);
      ctx.store.writeKey(id, null);
      keepNewKey(ctx, rotated, [
        ['Replaces', rotated.previousKeyId],
        ['Old key works until', localTime(rotated.previousKeyRevokedAt)],
        ['Moved', `${rotated.movedOrders} orders, ${rotated.movedWebhooks} webhooks`],
      ]);
    },
  },
  {
    path: ['keys', 'revoke'],
    summary: 'Revoke a key at once (its requests answer 401 from now on)',
    ...takes('<id>'),
    async run(ctx, _values, [id]) {
      const key = await ctx.developer().keys.revoke(id);
      ctx.store.writeKey(id, null);
      ctx.out.result(key, () => ctx.out.line(`Revoked ${key.id} (${key.name}) at ${localTime(key.revokedAt)}`));
    },
  },
  {
    path: ['keys', 'usage'],
    summary: 'Requests per UTC day made with a key',
    ...takes('<id>'),
    options: { days: text('<n>', '1 to 35, default 7') },
    async run(ctx, values, [id]) {
      const usage = await ctx.developer().keys.usage(id, { days: intOption(values, 'days') });
      ctx.out.result(usage, () => {
        ctx.out.table(usage.items, [
          ['DAY', (d) => d.day],
          ['REQUESTS', (d) => d.requests],
          ['4XX', (d) => d.clientErrors],
          ['5XX', (d) => d.serverErrors],
        ]);
        ctx.out.line(`Total: ${usage.totalRequests} requests in ${usage.days} days`);
      });
    },
  },
  {
    path: ['keys', 'checklist'],
    summary: 'The go-live checklist of a sandbox key',
    ...takes('<id>'),
    async run(ctx, _values, [id]) {
      const list = await ctx.developer().keys.checklist(id);
      ctx.out.result(list, () => {
        ctx.out.table(list.items, [
          ['DONE', (i) => (i.done ? 'yes' : 'no')],
          ['ITEM', (i) => i.title],
          ['WHEN / HINT', (i) => (i.done ? localTime(i.doneAt) : i.hint)],
        ]);
        if (list.complete) ctx.out.line('Complete: the key is ready to go live.');
      });
    },
  },
];

/** The key a command acts for: `--key`, or the only active key of the partner (of `environment`, when given). */
export async function chooseKey(
  ctx: Parameters<Command['run']>[0],
  keyId: string | undefined,
  environment?: 'LIVE' | 'SANDBOX',
): Promise<Key> {
  const keys = (await ctx.developer().keys.list()).items;
  if (keyId) {
    const key = keys.find((k) => k.id === keyId);
    if (!key) throw new CliError(`No key ${keyId} among your keys (partner keys list)`);
    return key;
  }
  const candidates = keys.filter((k) => k.isActive && !k.revokedAt && (!environment || k.environment === environment));
  if (candidates.length === 1) return candidates[0];
  const what = environment ? `${environment.toLowerCase()} key` : 'key';
  throw new CliError(
    candidates.length === 0
      ? `No active ${what}: create one with \`partner keys create --name <name>${environment === 'LIVE' ? ' --env live' : ''}\``
      : `You have ${candidates.length} active ${what}s: choose one with --key <id> (${candidates.map((k) => `${k.id} ${k.name}`).join('; ')})`,
    2,
  );
}
