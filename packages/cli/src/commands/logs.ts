/**
 * `partner logs …`: the request log (docs/decisions-log.md, 'Request log'). `tail` prints the realtime channel's
 * `request.logged` as they come (the channel sends a partner's requests to its connected users), filtered
 * here as `GET /v1/developer/requests` filters; with `--since`, and after every reconnection, it first
 * prints what the log holds since then, so nothing in between is missed (each request once).
 */
import type { operations, Schemas } from '@partner-logistics/sdk';
import {
  type Command,
  type Context,
  type OptionSpec,
  PAGE_OPTIONS,
  pageQuery,
  stringOption,
  takes,
  text,
  timeOption,
  type Values,
} from '../command.js';
import { CliError, localTime } from '../output.js';
import { openChannel } from '../realtime.js';

type LoggedRequest = Schemas['DeveloperRequest'];

type Filter = Pick<
  NonNullable<operations['listDeveloperRequests']['parameters']['query']>,
  'apiKeyId' | 'status' | 'path' | 'method'
>;

const FILTER_OPTIONS: Record<string, OptionSpec> = {
  key: text('<id>', 'only requests made with this key'),
  status: text('<2xx|4xx|5xx|404>', 'a status class or one status'),
  path: text('<path>', 'an exact path, or a prefix ending in * (/v1/partner/orders*)'),
  method: text('<GET|POST|…>', 'HTTP method'),
};

function filterOf(values: Values): Filter {
  const status = stringOption(values, 'status');
  if (status !== undefined && !/^([2-5]xx|[1-5]\d\d)$/.test(status))
    throw new CliError('--status must be 2xx, 4xx, 5xx or a status such as 404', 2);
  return {
    apiKeyId: stringOption(values, 'key'),
    status,
    path: stringOption(values, 'path'),
    method: stringOption(values, 'method')?.toUpperCase() as Filter['method'],
  };
}

/** The same rules as the list's query, applied to a live `request.logged`. */
export function matches(filter: Filter, r: LoggedRequest): boolean {
  if (filter.apiKeyId && r.apiKeyId !== filter.apiKeyId) return false;
  if (filter.method && r.method !== filter.method) return false;
  if (filter.status) {
    const s = filter.status;
    if (s.endsWith('xx') ? String(r.statusCode)[0] !== s[0] : String(r.statusCode) !== s) return false;
  }
  if (filter.path) {
    if (filter.path.endsWith('*') ? !r.path.startsWith(filter.path.slice(0, -1)) : r.path !== filter.path) return false;
  }
  return true;
}

function requestLine(ctx: Context, r: LoggedRequest): void {
  const target = r.query ? `${r.path}?${r.query}` : r.path;
  const code = r.errorCode ? `  ${r.errorCode}` : '';
  ctx.out.line(
    `${localTime(r.createdAt)}  ${r.statusCode}  ${r.method.padEnd(6)} ${target}  ${r.durationMs} ms  key ${r.apiKeyId}  ${r.id}${code}`,
  );
}

export const logCommands: Command[] = [
  {
    path: ['logs', 'tail'],
    summary: 'Print your keys’ API requests live, one line each (Ctrl-C to stop)',
    options: {
      ...FILTER_OPTIONS,
      since: text('<time>', 'first print what was logged since then (ISO time, or 15m, 2h ago)'),
    },
    examples: ['partner logs tail', 'partner logs tail --status 4xx --path "/v1/partner/orders*" --since 10m'],
    async run(ctx, values) {
      const filter = filterOf(values);
      const dev = ctx.developer();
      const seen = new Set<string>();
      const print = (r: LoggedRequest) => {
        if (seen.has(r.id) || !matches(filter, r)) return;
        seen.add(r.id);
        if (seen.size > 10_000) seen.delete(seen.values().next().value as string);
        ctx.out.streamed(r, () => requestLine(ctx, r));
      };
      // Live lines wait while a backfill is printed, so the output stays in time order.
      let held: LoggedRequest[] | null = null;
      let newest: string | undefined = timeOption(values, 'since');
      const channel = openChannel(ctx, async (_socket, reconnect) => {
        if (!reconnect) ctx.out.note(`Tailing the request log on ${ctx.endpoints.apiUrl} (Ctrl-C to stop)`);
        if (!newest) return;
        held = [];
        const backlog: LoggedRequest[] = [];
        for await (const r of dev.requests.all({ ...filter, since: newest, pageSize: 50 })) backlog.push(r);
        for (const r of backlog.reverse()) print(r);
        for (const r of held) print(r);
        held = null;
      });
      channel.socket.on('request.logged', ({ request }: { request: LoggedRequest }) => {
        if (!newest || request.createdAt > newest) newest = request.createdAt;
        if (held) held.push(request);
        else print(request);
      });
      // After a reconnection, backfill from the last request seen (or from when the connection was lost).
      channel.socket.on('disconnect', () => {
        newest ??= new Date().toISOString();
      });
      await channel.done;
    },
  },
  {
    path: ['logs', 'list'],
    summary: 'Logged requests, newest first',
    options: {
      ...FILTER_OPTIONS,
      since: text('<time>', 'arrived at or after (ISO time, or 15m, 2h ago)'),
      until: text('<time>', 'arrived before'),
      code: text('<ERR_…>', 'only answers with this error code'),
      ...PAGE_OPTIONS,
      'starting-after': text('<req_…>', 'the requests logged before this one (a previous page’s "next"), any depth'),
    },
    async run(ctx, values) {
      const startingAfter = stringOption(values, 'starting-after');
      const { page: pageNo, pageSize } = pageQuery(values);
      const page = await ctx.developer().requests.list({
        ...filterOf(values),
        code: stringOption(values, 'code'),
        since: timeOption(values, 'since'),
        until: timeOption(values, 'until'),
        ...(startingAfter === undefined ? { page: pageNo, pageSize } : { startingAfter, pageSize }),
      });
      ctx.out.result(page, () => {
        if (page.items.length === 0) ctx.out.line('No requests');
        for (const r of page.items) requestLine(ctx, r);
        if (startingAfter === undefined) ctx.out.pageFooter(page, page.totalCapped ? 'requests at least' : 'requests');
        if (page.nextStartingAfter) ctx.out.line(`Next: --starting-after ${page.nextStartingAfter}`);
      });
    },
  },
  {
    path: ['logs', 'drops'],
    summary: 'Requests left out of the log, or of the live tail, per minute (under overload)',
    options: {
      since: text('<time>', 'period start (default: 24 h before --until)'),
      until: text('<time>', 'period end (default: now)'),
    },
    async run(ctx, values) {
      const drops = await ctx.developer().GET('/v1/developer/requests/drops', {
        params: { query: { since: timeOption(values, 'since'), until: timeOption(values, 'until') } },
      });
      ctx.out.result(drops, () => {
        ctx.out.table(
          drops.items,
          [
            ['MINUTE', (m) => localTime(m.minute)],
            ['DROPPED', (m) => m.dropped],
            ['NOT STREAMED', (m) => m.notStreamed],
          ],
          'Nothing left out',
        );
        ctx.out.line(
          `${drops.dropped} dropped, ${drops.notStreamed} not streamed, ${localTime(drops.since)} to ${localTime(drops.until)}`,
        );
      });
    },
  },
  {
    path: ['logs', 'get'],
    summary: 'One logged request with its bodies (kept for POSTs and error answers)',
    ...takes('<request-id>'),
    async run(ctx, _values, [id]) {
      const r = await ctx.developer().requests.get(id);
      ctx.out.result(r, () => {
        requestLine(ctx, r);
        ctx.out.record([
          ['User agent', r.userAgent],
          ['IP', r.ip],
          ['Idempotency key', r.idempotencyKey],
          ['Request body', r.requestBody],
          ['Response body', r.responseBody],
        ]);
      });
    },
  },
];
