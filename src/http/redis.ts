import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';

/**
 * How long a command may wait for Redis's answer. A Redis that stops answering without closing
 * the connection (stalled, or cut off by the network) otherwise holds every request for good.
 */
const COMMAND_TIMEOUT_MS = 250;

/**
 * Connects a Redis client for the shared rate-limit counters that never makes a request wait for Redis:
 * while Redis is unreachable commands fail at once (no offline queue, one retry), and while it
 * does not answer they fail after COMMAND_TIMEOUT_MS; either way the limit is skipped. The log
 * says so when the connection goes down and again when it is back (a stall closes nothing, and
 * logs nothing; readiness says it).
 */
export async function openRedis(url: string, log: FastifyBaseLogger): Promise<Redis> {
  const redis = new Redis(url, {
    connectTimeout: 1000,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  let down = false;
  redis.on('error', (error) => {
    if (down) return;
    down = true;
    log.error({ err: error }, 'Redis is unreachable: requests are served WITHOUT the rate limit until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log.warn('Redis is reachable again: the rate limit is enforced');
  });
  // Counting starts with the first request when Redis is up at start; when it is not, serve anyway.
  await new Promise<void>((resolve) => {
    redis.once('ready', resolve);
    redis.once('error', () => resolve());
  });
  return redis;
}
