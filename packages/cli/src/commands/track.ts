/** `partner track <code>`: where an order's courier is (GET /v1/partner/orders/{code}/tracking), and its proof. */
import type { Schemas } from '@partner-logistics/sdk';
import { type Command, type Context, flag, stringOption, takes } from '../command.js';
import { localTime } from '../output.js';
import { KEY_OPTION } from './orders.js';

type OrderTracking = Schemas['OrderTracking'];

function printTracking(ctx: Context, tracking: OrderTracking): void {
  ctx.out.result(tracking, () => {
    const at = tracking.location;
    ctx.out.record([
      ['Order', tracking.orderCode],
      ['Status', tracking.status],
      [
        'Courier',
        at ? `${at.lat.toFixed(5)}, ${at.lng.toFixed(5)}${at.accuracyM === null ? '' : ` (±${at.accuracyM} m)`}` : null,
      ],
      ['Seen', at ? localTime(at.at) : null],
      ['ETA', tracking.etaAt ? localTime(tracking.etaAt) : null],
      ['Trail', `${tracking.trail.length} point(s)`],
    ]);
    for (const p of tracking.trail.slice(-10)) ctx.out.line(`  ${localTime(p.at)}  ${p.lat.toFixed(5)}, ${p.lng.toFixed(5)}`);
  });
}

function printProof(ctx: Context, proof: Schemas['OrderProof']): void {
  ctx.out.result(proof, () =>
    ctx.out.record([
      ['Proof of', `${proof.event} at ${localTime(proof.at)}`],
      [
        'Location',
        proof.location
          ? `${proof.location.lat.toFixed(5)}, ${proof.location.lng.toFixed(5)} (±${proof.location.accuracyM} m)`
          : null,
      ],
      ['Distance', proof.distanceM === null ? null : `${proof.distanceM} m from the address`],
      ['Recipient', proof.recipientName],
      ['Photos', proof.photos.map((p) => `${p.id} (${p.contentType}, ${p.bytes} bytes)`).join(', ') || null],
    ]),
  );
}

export const trackCommands: Command[] = [
  {
    path: ['track'],
    summary: "Where an order's courier is: latest position, ETA and trail (with --proof, the proof of delivery)",
    ...takes('<code>'),
    options: { ...KEY_OPTION, proof: flag('show the proof of the latest DELIVERED or FAILED that carried one instead') },
    examples: ['partner track ORD-7KQ2M9 --key 3f1c…', 'partner track ORD-7KQ2M9 --proof --json'],
    async run(ctx, values, [code]) {
      const partner = ctx.partner(stringOption(values, 'key'));
      if (values.proof) {
        printProof(ctx, await partner.GET('/v1/partner/orders/{code}/proof', { params: { path: { code } } }));
        return;
      }
      printTracking(ctx, await partner.GET('/v1/partner/orders/{code}/tracking', { params: { path: { code } } }));
    },
  },
];
