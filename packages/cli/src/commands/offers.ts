/**
 * `partner offers …`: orders the marketplace offers to a key before they are its own: list them, accept
 * (one or up to 100 at once), decline with a reason. The partner API, with an API key (`--key` or
 * PARTNER_API_KEY), live or sandbox alike.
 */
import type { Schemas } from '@partner-logistics/sdk';
import { type Command, PAGE_OPTIONS, pageQuery, requiredOption, stringOption, text } from '../command.js';
import { CliError, type Column, localTime } from '../output.js';
import { KEY_OPTION } from './orders.js';

type Offer = Schemas['PartnerOffer'];

const STATUSES = ['PENDING', 'ACCEPTED', 'DECLINED', 'EXPIRED', 'WITHDRAWN'] as const;
const REASONS = ['NO_CAPACITY', 'OUT_OF_AREA', 'TIME_WINDOW', 'OTHER'] as const;

const money = (qepik: number) => (qepik / 100).toFixed(2);

export const offerColumns: Array<Column<Offer>> = [
  ['ID', (o) => o.id],
  ['ORDER', (o) => o.orderCode],
  ['STATUS', (o) => o.status],
  ['PAYMENT', (o) => o.order.paymentMethod],
  ['COD', (o) => (o.order.codAmountQepik ? money(o.order.codAmountQepik) : '-')],
  ['AREA', (o) => o.order.area],
  ['EXPIRES', (o) => localTime(o.expiresAt)],
  ['REASON', (o) => o.declineReason],
];

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  const upper = value.toUpperCase() as T;
  if (!allowed.includes(upper)) throw new CliError(`--${name} must be one of ${allowed.join(', ')}, not "${value}"`, 2);
  return upper;
}

export const offerCommands: Command[] = [
  {
    path: ['offers'],
    summary: 'The offers made to a key, newest first (accept or decline them before their deadline)',
    options: {
      ...KEY_OPTION,
      status: text('<status>', `only offers in this status: ${STATUSES.join(', ')}`),
      ...PAGE_OPTIONS,
    },
    examples: ['partner offers --status pending --key 3f1c…'],
    async run(ctx, values) {
      const page = await ctx.partner(stringOption(values, 'key')).GET('/v1/partner/offers', {
        params: { query: { status: oneOf('status', stringOption(values, 'status'), STATUSES), ...pageQuery(values) } },
      });
      ctx.out.pagedResult(page, offerColumns, 'offers');
    },
  },
  {
    path: ['offers', 'accept'],
    summary: 'Accept offers (1 to 100): each order is assigned to the key; each id is decided on its own',
    args: '<id…>',
    positionals: { min: 1, max: 100 },
    options: KEY_OPTION,
    examples: ['partner offers accept ofr_4d2… ofr_9a7… --key 3f1c…'],
    async run(ctx, values, ids) {
      const partner = ctx.partner(stringOption(values, 'key'));
      const { results } = await partner.POST('/v1/partner/offers/accept', { body: { ids } });
      ctx.out.result({ results }, () =>
        ctx.out.table(results, [
          ['ID', (r) => r.id],
          ['ORDER', (r) => r.offer?.orderCode],
          ['RESULT', (r) => (r.offer ? r.offer.status : `${r.error?.message} (${r.error?.code})`)],
        ]),
      );
      const failed = results.filter((r) => r.error).length;
      if (failed > 0) throw new CliError(`${failed} of ${results.length} offers not accepted`);
    },
  },
  {
    path: ['offers', 'decline'],
    summary: 'Decline an offer with a reason; the order stays unassigned and goes elsewhere',
    args: '<id>',
    positionals: { min: 1, max: 1 },
    options: {
      ...KEY_OPTION,
      reason: text('<reason>', REASONS.join(', ')),
      note: text('<text>', 'why, in at most 500 characters (required with OTHER)'),
    },
    examples: [
      'partner offers decline ofr_4d2… --reason no_capacity --key 3f1c…',
      'partner offers decline ofr_4d2… --reason other --note "Van in repair"',
    ],
    async run(ctx, values, [id]) {
      const reason = oneOf('reason', requiredOption(values, 'reason'), REASONS) as (typeof REASONS)[number];
      const note = stringOption(values, 'note');
      const offer = await ctx.partner(stringOption(values, 'key')).POST('/v1/partner/offers/{id}/decline', {
        params: { path: { id } },
        body: { reason, ...(note === undefined ? {} : { note }) },
      });
      ctx.out.result(offer, () => ctx.out.line(`Declined ${offer.id} (${offer.orderCode}): ${offer.declineReason}`));
    },
  },
];
