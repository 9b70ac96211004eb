/**
 * Serves the realtime channel on this listener: attaches Socket.IO to the Fastify HTTP server once the
 * app is ready, detaches on close. See modules/realtime/realtime.hub.ts.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { acquireRealtimeHub } from '../modules/realtime/realtime.hub.js';

export const realtimePlugin = fp(
  async (app: FastifyInstance) => {
    const { hub, release } = acquireRealtimeHub(app.ctx);
    const io = hub.attach(app.server);
    // Disconnect sockets before the HTTP server closes (open websockets would hold it open).
    app.addHook('preClose', async () => {
      await hub.detach(io);
    });
    app.addHook('onClose', async () => {
      await release();
    });
  },
  { name: 'realtime', dependencies: ['context'] },
);
