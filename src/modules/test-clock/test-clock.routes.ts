import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { isTestClock, SharedTestClock } from '../../clock.js';
import { DateTime, errorResponses } from '../../shared/schemas.js';

const ClockState = Type.Object({ now: DateTime() }, { additionalProperties: false });
const AdvanceClock = Type.Object(
  { advanceSec: Type.Number({ minimum: 0, maximum: 10 * 365 * 86400, description: 'seconds to move forward; never back' }) },
  { additionalProperties: false },
);

/**
 * Test clock (docs/decisions-log.md, 'Test clock'): registered only with TEST_CLOCK=1, refused in production by config. On a
 * PostgreSQL server the clock is shared by every process (docs/decisions-log.md, 'Dependency faults', clock.ts): the POST answers once
 * the advance is in the database and announced, and the GET reads the database first, so any process
 * asked after an advance answers the advanced time.
 */
export const testClockRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const clock = app.ctx.clock;
  if (!isTestClock(clock)) return;

  app.get('/v1/test/clock', { schema: { hide: true, response: { 200: ClockState, ...errorResponses(503) } } }, async () => {
    if (clock instanceof SharedTestClock) await clock.sync();
    return { now: clock.now().toISOString() };
  });

  app.post(
    '/v1/test/clock',
    { schema: { hide: true, body: AdvanceClock, response: { 200: ClockState, ...errorResponses(400, 503) } } },
    async (request) => {
      if (clock instanceof SharedTestClock) await clock.advanceShared(request.body.advanceSec);
      else clock.advance(request.body.advanceSec);
      return { now: clock.now().toISOString() };
    },
  );
};
