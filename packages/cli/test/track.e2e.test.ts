import { describe, expect, it } from 'vitest';
import { run, runJson, sandboxKey, setUpCliApp, signedIn, TEST_TIMEOUT, t } from './cli.test-helpers.js';

setUpCliApp();

describe('partner track', TEST_TIMEOUT, () => {
  it("prints the courier's position, ETA and trail, and with --proof the proof of delivery", async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    const created = await runJson<{ items: Array<{ code: string }> }>(user, ['trigger', 'order']);
    const code = created.items[0].code;
    expect((await run(user, ['events', 'post', code, 'PICKED_UP', '--key', key.id])).code).toBe(0);
    const at = t.clock.now().toISOString();
    const ping = await t.sandbox.inject({
      method: 'POST',
      url: `/v1/partner/orders/${code}/locations`,
      headers: { 'x-api-key': key.key },
      payload: { points: [{ lat: 40.41, lng: 49.86, accuracyM: 7, at }], etaAt: at },
    });
    expect(ping.statusCode, ping.body).toBe(202);
    const tracking = await runJson<{ orderCode: string; location: unknown; trail: unknown[] }>(user, [
      'track',
      code,
      '--key',
      key.id,
    ]);
    expect(tracking).toMatchObject({
      orderCode: code,
      status: 'SCANNED_TO_VAN',
      location: { lat: 40.41, lng: 49.86, accuracyM: 7, at },
    });
    const human = await run(user, ['track', code, '--key', key.id]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Courier:\s+40\.41000, 49\.86000 \(±7 m\)/);
    const noProof = await run(user, ['track', code, '--proof', '--key', key.id]);
    expect(noProof.code).toBe(1);
    expect(noProof.stderr).toMatch(/\(ERR_NOT_FOUND, HTTP 404\)/);

    // A courier run: pings toward the address, then DELIVERED there with a photo.
    const courierKey = await runJson<{ id: string }>(user, [
      'keys',
      'create',
      '--name',
      'Courier key',
      '--scopes',
      'orders:read,orders:pii,logistics:write',
    ]);
    const run1 = await runJson<{ order: { code: string; status: string }; locationsAccepted: number; photoId: string }>(user, [
      'trigger',
      'courier',
      '--key',
      courierKey.id,
    ]);
    expect(run1.order.status).toBe('DELIVERED');
    expect(run1.locationsAccepted).toBe(5);
    const proof = await runJson<{ event: string; distanceM: number | null; photos: Array<{ id: string }> }>(user, [
      'track',
      run1.order.code,
      '--proof',
      '--key',
      courierKey.id,
    ]);
    expect(proof.event).toBe('DELIVERED');
    expect(proof.photos.map((p) => p.id)).toEqual([run1.photoId]);
  });
});
