/** Helpers of the realtime tests: a Socket.IO connection to the app's live listener. */
import type { AddressInfo } from 'node:net';
import { io as connect, type Socket } from 'socket.io-client';
import { onTestFinished } from 'vitest';
import type { TestApp } from '../../../test/harness.js';
import type { AppEventBus, AppEvents } from '../../events.js';

/**
 * A connection of `token` to /realtime on the live listener (which must be listening), once it is
 * connected; rejected when the connection is refused. It is closed when the test ends.
 */
export async function openRealtime(t: TestApp, token: string): Promise<Socket> {
  const { port } = t.live.server.address() as AddressInfo;
  const socket = connect(`http://127.0.0.1:${port}/realtime`, {
    auth: { token },
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
  });
  onTestFinished(() => {
    socket.disconnect();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return socket;
}

/**
 * Emits an in-process event with a hand-made payload carrying only what the hub reads (the bus is typed
 * with whole payloads: src/events.ts).
 */
export function emitPartial<K extends keyof AppEvents>(events: AppEventBus, event: K, ...args: unknown[]): void {
  (events.emit as (event: K, ...args: unknown[]) => boolean)(event, ...args);
}
