/**
 * Serves the realtime channel on this listener: attaches the process's hub (`ctx.realtime`, made and
 * closed by createContext) to the Fastify HTTP server, detaches before the server closes. See
 * modules/realtime/realtime.hub.ts.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const realtimePlugin = fp(
  async (app: FastifyInstance) => {
    const hub = app.ctx.realtime;
    const io = hub.attach(app.server);
    // Disconnect sockets before the HTTP server closes (open websockets would hold it open).
    app.addHook('preClose', async () => {
      await hub.detach(io);
    });
  },
  { name: 'realtime', dependencies: ['context'] },
);
