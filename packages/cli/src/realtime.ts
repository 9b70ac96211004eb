/**
 * The realtime channel (Socket.IO namespace `/realtime` on the API, docs/realtime.md) for the
 * long-running commands. The handshake takes a fresh access token each time it connects (refreshed
 * through the SDK, and kept, when it is about to expire); a refused token, or the server's
 * `session.expired`, makes it refresh and connect again; a lost connection is retried by Socket.IO
 * itself. `onConnect` runs after every (re)connection: subscribe again, backfill what was missed.
 */
import type { DeveloperClient } from '@partner-logistics/sdk';
import { PartnerApiError } from '@partner-logistics/sdk';
import { io, type Socket } from 'socket.io-client';
import type { Context } from './command.js';
import { CliError } from './output.js';
import { freshAccessToken, USER_AGENT } from './session.js';

export interface Channel {
  socket: Socket;
  /** Resolves when the user interrupts; rejects when the channel cannot go on (session over). */
  done: Promise<void>;
  close(): void;
}

export function openChannel(ctx: Context, onConnect: (socket: Socket, reconnect: boolean) => Promise<void>): Channel {
  const dev: DeveloperClient = ctx.developer();
  let fail: (err: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  const socket = io(`${ctx.endpoints.apiUrl}/realtime`, {
    transports: ['websocket'],
    extraHeaders: { 'User-Agent': USER_AGENT },
    auth: (cb) => {
      freshAccessToken(dev).then(
        (token) => cb({ token }),
        (err) => fail(sessionOver(err)),
      );
    },
  });
  let connections = 0;
  let unreachableNoted = false;
  socket.on('connect', () => {
    unreachableNoted = false;
    const reconnect = connections++ > 0;
    onConnect(socket, reconnect).catch((err) => fail(err));
  });
  socket.on('connect_error', (err: Error & { data?: { message?: string } }) => {
    // A refused handshake is not retried by Socket.IO: refresh the token, then connect again.
    if (err.message === 'ERR_UNAUTHORIZED') {
      dev.refresh().then(
        () => socket.connect(),
        (refreshErr) => fail(sessionOver(refreshErr)),
      );
    } else if (err.message === 'ERR_FORBIDDEN') {
      fail(new CliError(err.data?.message ?? 'This account may not use the realtime channel'));
    } else if (!unreachableNoted) {
      // Anything else (the API is unreachable): Socket.IO keeps trying.
      unreachableNoted = true;
      ctx.out.note(`Cannot reach ${ctx.endpoints.apiUrl} (${err.message}); trying again…`);
    }
  });
  socket.on('disconnect', (reason) => {
    // The server ended it (the token expired: `session.expired`): connect again with a fresh token.
    if (reason === 'io server disconnect') socket.connect();
  });
  const close = () => {
    socket.close();
  };
  return {
    socket,
    close,
    done: Promise.race([ctx.interrupted, failed]).finally(close),
  };
}

function sessionOver(err: unknown): unknown {
  if (err instanceof PartnerApiError && (err.status === 401 || err.status === 403)) {
    return new CliError('The session has ended: run `partner login` again');
  }
  return err;
}
