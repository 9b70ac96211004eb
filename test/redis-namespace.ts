import type { Redis } from 'ioredis';

/**
 * Deletes every Redis key of one namespace (REDIS_KEY_PREFIX): rate-limit logs, the key-cache generation,
 * order-cache versions. Used by the test harness and the benchmark, which each run under a prefix of
 * their own, to leave a shared Redis as they found it.
 */
export async function dropRedisNamespace(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
