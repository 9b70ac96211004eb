import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { isTestClock } from '../../clock.js';
import { DateTime, errorResponses } from '../../shared/schemas.js';

const ClockState = Type.Object({ now: DateTime() }, { additionalProperties: false });
const AdvanceClock = Type.Object(
  { advanceSec: Type.Number({ minimum: 0, maximum: 10 * 365 * 86400, description: 'seconds to move forward; never back' }) },
  { additionalProperties: false },
);

/** Test clock (decisions §10): registered only with TEST_CLOCK=1, refused in production by config. */
export const testClockRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const clock = app.ctx.clock;
  if (!isTestClock(clock)) return;

  app.get('/v1/test/clock', { schema: { hide: true, response: { 200: ClockState } } }, async () => ({
    now: clock.now().toISOString(),
  }));

  app.post(
    '/v1/test/clock',
    { schema: { hide: true, body: AdvanceClock, response: { 200: ClockState, ...errorResponses(400) } } },
    async (request) => {
      clock.advance(request.body.advanceSec);
      return { now: clock.now().toISOString() };
    },
  );
};
