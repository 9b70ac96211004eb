/**
 * `partner trigger courier`: a sandbox courier run (docs/tracking-and-proof.md, "Sandbox"). A test order
 * is created for the key, picked up, sent along a route of a few pings toward its address, and
 * delivered there with proof (the location, a photo, the recipient), through the partner API with the
 * key's full key (one this CLI created or rotated), exactly as an integration would.
 */
import type { PartnerOrder, Schemas } from '@partner-logistics/sdk';
import { type Command, type OptionSpec, stringOption, text } from '../command.js';
import { CliError } from '../output.js';
import { chooseKey } from './keys.js';

const SANDBOX_KEY: Record<string, OptionSpec> = {
  key: text('<id>', 'the sandbox key (default: your only active sandbox key); its full key must be kept by this CLI'),
};

/** Where a courier ends when the address has no coordinates (central Baku). */
const DEFAULT_POINT = { lat: 40.3777, lng: 49.8531 };
const PINGS = 5;

/** A small whole JPEG (SOI, an APP0 segment, filler, EOI); the upload rules judge its first bytes. */
function samplePhoto(): Uint8Array {
  const b = new Uint8Array(256).fill(0x11);
  b.set([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00], 0);
  b.set([0xff, 0xd9], b.length - 2);
  return b;
}

export const courierCommands: Command[] = [
  {
    path: ['trigger', 'courier'],
    summary: 'Sandbox: a courier run: a test order picked up, a few location pings toward its address, delivered with proof',
    options: SANDBOX_KEY,
    examples: ['partner trigger courier --key 3f1c…', 'partner trigger courier --json'],
    async run(ctx, values) {
      const keyId = (await chooseKey(ctx, stringOption(values, 'key'), 'SANDBOX')).id;
      const partner = ctx.partner(keyId);
      const created = await ctx.developer().POST('/v1/developer/keys/{id}/sandbox/orders', {
        params: { path: { id: keyId } },
        body: { count: 1 },
      });
      const order: PartnerOrder = created.items[0];
      if (!order) throw new CliError('the sandbox created no order', 1);
      // The address (its coordinates) is shown only to a key with orders:pii; the geofence needs it.
      if (order.customer === null) {
        throw new CliError(
          `${order.code} was created, but this key cannot see its address: a courier run needs a key with orders:pii`,
          1,
        );
      }
      const address = order.customer.address;
      const home = address.lat !== null && address.lng !== null ? { lat: address.lat, lng: address.lng } : DEFAULT_POINT;
      await partner.reportEvent(order.code, { type: 'PICKED_UP' });
      await partner.reportEvent(order.code, { type: 'EN_ROUTE' });
      // From about 2 km south-west to the door, one point every 6 s of their times (each one stored).
      const now = Date.now();
      const points = Array.from({ length: PINGS }, (_, i) => {
        const left = (PINGS - 1 - i) / (PINGS - 1);
        return {
          lat: home.lat - 0.014 * left,
          lng: home.lng - 0.014 * left,
          accuracyM: 12,
          at: new Date(now - left * 24_000).toISOString(),
        };
      });
      const pinged = await partner.POST('/v1/partner/orders/{code}/locations', {
        params: { path: { code: order.code } },
        body: { points, etaAt: new Date(now + 60_000).toISOString() },
      });
      const photo = (await partner.POST('/v1/partner/uploads', {
        body: samplePhoto() as never,
        bodySerializer: (body: unknown) => body,
        headers: { 'Content-Type': 'image/jpeg' },
      } as never)) as unknown as Schemas['Upload'];
      const delivered = await partner.reportEvent(order.code, {
        type: 'DELIVERED',
        ...(order.paymentMethod === 'COD' ? { codCollectedQepik: order.codAmountQepik } : {}),
        proof: {
          location: { ...home, accuracyM: 12 },
          photoIds: [photo.id],
          recipientName: order.customer?.name ?? 'Sandbox recipient',
        },
      });
      const result = { order: delivered, locationsAccepted: pinged.accepted, photoId: photo.id };
      ctx.out.result(result, () => {
        ctx.out.line(
          `${order.code}: picked up, ${pinged.accepted} location(s) sent toward ${home.lat}, ${home.lng}, delivered with proof`,
        );
        ctx.out.line(`  photo ${photo.id}; see it with: partner track ${order.code} --proof --key ${keyId}`);
      });
    },
  },
];
