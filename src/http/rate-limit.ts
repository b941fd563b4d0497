import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { snapshotMemoryStore } from './memory-rate-store.js';
import { rateLimitKey } from './rate-limit-key.js';

export interface RateLimitOptions {
  /** Requests per window per client IP; 0 turns the limit off. */
  max: number;
  windowMs: number;
  /** IPv6 clients count by this many leading bits of their address (RATE_LIMIT_IPV6_PREFIX). */
  ipv6PrefixLength: number;
  /**
   * Whether every answer carries X-RateLimit-Limit, -Remaining and -Reset; a 429 always does.
   * Answers that shared caches keep must not, or one client's count would be shown to others.
   */
  headersOnEveryAnswer?: boolean;
  /** Keeps the counters in Redis, shared by every instance; in this process when absent. */
  redis?: Redis;
  redisNamespace?: string;
  /** What a request counts against; its client IP (rateLimitKey) when absent. */
  keyOf?: (request: FastifyRequest) => string;
  /** Called for each request refused with 429. */
  onRejected?: () => void;
}

/**
 * The per-IP limit (docs/api.md, "Rate limit") over every request to the scope it is
 * registered in: a fixed window that starts with a client's first request. The client IP is
 * `request.ip`, which believes X-Forwarded-For only from the proxies in TRUST_PROXY; an IPv6
 * client counts with its whole network prefix (rateLimitKey).
 */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  if (options.max === 0) return;
  await app.register(rateLimit, {
    // Not per route but one hook on the whole scope: it also counts requests for unknown routes,
    // and runs before authentication, so that 401s count too.
    global: false,
    max: options.max,
    timeWindow: options.windowMs,
    hook: 'onRequest',
    keyGenerator: options.keyOf ?? ((request) => rateLimitKey(request.ip, options.ipv6PrefixLength)),
    onExceeded: () => options.onRejected?.(),
    ...(options.headersOnEveryAnswer === false
      ? { addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false } }
      : {}),
    ...(options.redis
      ? // Counted atomically in Redis (a Lua script). While Redis is down the request is served:
        // an outage of the limiter must not become an outage of the API (see docs/deployment.md).
        { redis: options.redis, nameSpace: options.redisNamespace, skipOnError: true }
      : // An LRU of clients in this process; the default 5,000 clients are too few for a public API.
        { store: snapshotMemoryStore(100_000) }),
  });
  app.addHook('onRequest', app.rateLimit());
}
