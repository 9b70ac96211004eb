/**
 * `partner payments …`, `partner balance`, `partner settlements …`: payment intents and cash-on-delivery
 * settlements through the partner API, with an API key holding payments:read (docs/payments.md).
 */
import type { Schemas } from '@partner-logistics/sdk';
import { type Command, flag, PAGE_OPTIONS, pageQuery, stringOption, takes, text, timeOption } from '../command.js';
import { type Column, localTime } from '../output.js';
import { KEY_OPTION, keyedRecord } from './orders.js';

type PaymentIntent = Schemas['PaymentIntent'];
type Settlement = Schemas['Settlement'];
type SettlementLine = Schemas['SettlementLine'];

/** An amount in qəpik as manats with two decimals (exact: integers only). */
const azn = (qepik: number) =>
  `${qepik < 0 ? '-' : ''}${Math.floor(Math.abs(qepik) / 100)}.${String(Math.abs(qepik) % 100).padStart(2, '0')}`;

const intentColumns: Array<Column<PaymentIntent>> = [
  ['ID', (p) => p.id],
  ['ORDER', (p) => p.orderCode],
  ['METHOD', (p) => p.method],
  ['STATUS', (p) => p.status],
  ['AMOUNT', (p) => azn(p.amountQepik)],
  ['RECEIVED', (p) => azn(p.amountReceivedQepik)],
  ['UPDATED', (p) => localTime(p.updatedAt)],
];
const settlementColumns: Array<Column<Settlement>> = [
  ['ID', (s) => s.id],
  ['STATUS', (s) => s.status],
  ['PERIOD END', (s) => localTime(s.periodEnd)],
  ['COLLECTIONS', (s) => String(s.collectionsCount)],
  ['DUE', (s) => azn(s.dueQepik)],
  ['OUTSTANDING', (s) => azn(s.outstandingQepik)],
];
const lineColumns: Array<Column<SettlementLine>> = [
  ['AT', (l) => localTime(l.at)],
  ['TYPE', (l) => l.type],
  ['ORDER', (l) => l.orderCode],
  ['AMOUNT', (l) => azn(l.amountQepik)],
  ['NOTE', (l) => l.note ?? l.reference],
];
/** `partner payments get`: every field of a payment intent. */
const intentFields: Array<Column<PaymentIntent>> = [
  ['Id', (p) => p.id],
  ['Order', (p) => p.orderCode],
  ['Method', (p) => p.method],
  ['Status', (p) => p.status],
  ['Amount', (p) => azn(p.amountQepik)],
  ['Received', (p) => azn(p.amountReceivedQepik)],
  ['Refunded', (p) => azn(p.amountRefundedQepik)],
  ['Settlement', (p) => p.settlementId],
  ['Captured', (p) => localTime(p.capturedAt)],
  ['Updated', (p) => localTime(p.updatedAt)],
];
/** `partner settlements get`: a settlement with its totals. */
const settlementFields: Array<Column<Settlement>> = [
  ['Id', (s) => s.id],
  ['Status', (s) => s.status],
  ['Period', (s) => `${localTime(s.periodStart)} – ${localTime(s.periodEnd)}`],
  ['Collections', (s) => String(s.collectionsCount)],
  ['Expected', (s) => azn(s.expectedQepik)],
  ['Collected', (s) => azn(s.collectedQepik)],
  ['Variance', (s) => azn(s.varianceQepik)],
  ['Adjustments', (s) => azn(s.adjustmentsQepik)],
  ['Due', (s) => azn(s.dueQepik)],
  ['Remitted', (s) => azn(s.remittedQepik)],
  ['Outstanding', (s) => azn(s.outstandingQepik)],
  ['Settled', (s) => localTime(s.settledAt)],
];

export const paymentCommands: Command[] = [
  {
    path: ['payments', 'list'],
    summary: 'List the payment intents of the orders your key sees, newest first',
    options: {
      ...KEY_OPTION,
      status: text('<STATUS>', 'only this status (COLLECTED, SUCCEEDED, …)'),
      method: text('<METHOD>', 'COD or CARD'),
      order: text('<code>', 'the intent of this order'),
      'updated-since': text('<time>', 'changed at or after (ISO time, or 15m, 2h, 7d ago)'),
      ...PAGE_OPTIONS,
    },
    examples: ['partner payments list --key 3f1c… --status COLLECTED', 'partner payments list --updated-since 1h --json'],
    async run(ctx, values) {
      const partner = ctx.partner(stringOption(values, 'key'));
      const page = await partner.GET('/v1/partner/payment-intents', {
        params: {
          query: {
            status: stringOption(values, 'status') as PaymentIntent['status'] | undefined,
            method: stringOption(values, 'method') as PaymentIntent['method'] | undefined,
            orderCode: stringOption(values, 'order'),
            updatedSince: timeOption(values, 'updated-since'),
            ...pageQuery(values),
          },
        },
      });
      ctx.out.pagedResult(page, intentColumns, 'payment intents');
    },
  },
  keyedRecord(
    ['payments', 'get'],
    'One payment intent',
    '<id>',
    (partner, id) => partner.GET('/v1/partner/payment-intents/{id}', { params: { path: { id } } }),
    intentFields,
  ),
  {
    path: ['balance'],
    summary:
      'Cash on hand (collected, on no settlement), what your settlements await, and your credit (over-remitted, carried to your next statement)',
    options: KEY_OPTION,
    examples: [
      'partner balance --key 3f1c…',
      'partner balance --key 3f1c… --json   # amounts in qəpik: creditQepik is the credit',
    ],
    async run(ctx, values) {
      const b = await ctx.partner(stringOption(values, 'key')).GET('/v1/partner/balance');
      ctx.out.result(b, () =>
        ctx.out.record([
          ['Environment', b.environment],
          ['Cash on hand', `${azn(b.codOnHandQepik)} AZN in ${b.collectionsOnHand} collections`],
          ['Oldest on hand', localTime(b.oldestCollectionOnHandAt)],
          ['Awaiting remittance', `${azn(b.awaitingRemittanceQepik)} AZN`],
          ['Credit', `${azn(b.creditQepik)} AZN${b.creditQepik === 0 ? '' : ', carried to your next statement'}`],
        ]),
      );
    },
  },
  {
    path: ['settlements', 'list'],
    summary: "Your partner's settlements, newest first",
    options: { ...KEY_OPTION, status: text('<STATUS>', 'AWAITING_REMITTANCE, PARTIALLY_REMITTED or SETTLED'), ...PAGE_OPTIONS },
    async run(ctx, values) {
      const page = await ctx.partner(stringOption(values, 'key')).GET('/v1/partner/settlements', {
        params: { query: { status: stringOption(values, 'status') as Settlement['status'] | undefined, ...pageQuery(values) } },
      });
      ctx.out.pagedResult(page, settlementColumns, 'settlements');
    },
  },
  keyedRecord(
    ['settlements', 'get'],
    'One settlement with its totals',
    '<id>',
    (partner, id) => partner.GET('/v1/partner/settlements/{id}', { params: { path: { id } } }),
    settlementFields,
  ),
  {
    path: ['settlements', 'lines'],
    summary: "A settlement's lines, oldest first (--csv: the CSV statement as the API sends it)",
    ...takes('<id>'),
    options: { ...KEY_OPTION, csv: flag('print the RFC 4180 CSV statement'), ...PAGE_OPTIONS },
    examples: ['partner settlements lines stl_… --key 3f1c…', 'partner settlements lines stl_… --csv > statement.csv'],
    async run(ctx, values, [id]) {
      const partner = ctx.partner(stringOption(values, 'key'));
      if (values.csv) {
        const csv = await partner.GET('/v1/partner/settlements/{id}/lines.csv', { params: { path: { id } }, parseAs: 'text' });
        process.stdout.write(String(csv));
        return;
      }
      const page = await partner.GET('/v1/partner/settlements/{id}/lines', {
        params: { path: { id }, query: pageQuery(values) },
      });
      ctx.out.pagedResult(page, lineColumns, 'lines');
    },
  },
];
