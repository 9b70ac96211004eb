import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { KeyResolver } from './key-resolver.js';
import type { RateLimiter } from './rate-limit.types.js';
import { MemoryRateLimiter } from './rate-limiter.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';

/**
 * The process's rate limiter: shared through Redis when it is configured (and then the key cache's
 * cross-process generation check rides on the same script, so it is wired here), otherwise in process.
 */
export function createRateLimiter(deps: {
  redis: Redis | null;
  prefix: string;
  clock: Clock;
  keys: KeyResolver;
  log: Logger;
}): RateLimiter {
  if (!deps.redis) return new MemoryRateLimiter(deps.clock);
  const limiter = new RedisRateLimiter(deps.redis, deps.clock, deps.log, deps.prefix);
  deps.keys.setGenerationBump(() => limiter.bumpKeyCacheGeneration());
  return limiter;
}
