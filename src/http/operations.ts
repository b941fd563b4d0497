import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { IndexStatus } from '../db/columnar/columnar-index.js';
import type { Database } from '../db/database.js';
import type { BlobStore } from '../storage/blob-store.js';

export interface OperationsOptions {
  database: Database;
  blobs: BlobStore;
  redis: Redis | undefined;
  /** How the columnar index of conversions stands. */
  conversionIndex: () => IndexStatus;
}

/** Prometheus metrics of one app; a registry of its own, so that apps in one process never mix. */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'acds_http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'acds_http_request_duration_seconds',
    help: 'Time from a request to its answer, by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  readonly rateLimitRejections = new Counter({
    name: 'acds_rate_limit_rejections_total',
    help: 'Requests refused with 429 by the rate limit',
    registers: [this.registry],
  });

  readonly cartNotifications = new Counter({
    name: 'acds_cart_notifications_total',
    help: 'Cart notifications by receiver and outcome: stored, duplicate, acknowledged (nothing to keep), invalid, refused (failed verification), unknown_token or failed (not stored: the database busy or failing; the cart retries)',
    labelNames: ['cart', 'outcome'],
    registers: [this.registry],
  });

  constructor(database: Database, conversionIndex: () => IndexStatus) {
    collectDefaultMetrics({ register: this.registry, prefix: 'acds_' });
    new Gauge({
      name: 'acds_conversion_index_rows_behind',
      help: 'Conversions the columnar index has yet to take in during a long catch-up (after a large import, or while it builds itself); 0 otherwise',
      registers: [this.registry],
      collect() {
        this.set(conversionIndex().rowsBehind);
      },
    });
    new Gauge({
      name: 'acds_db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle, waiting clients); absent on SQLite',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const stats = database.poolStats();
        if (!stats) return;
        for (const [state, value] of Object.entries(stats)) this.set({ state }, value);
      },
    });
  }
}

type CheckResult = 'ok' | 'unreachable' | 'not configured';

/**
 * `/healthz`, `/readyz` and `/metrics`: for load balancers and Prometheus, outside `/api/v1`, so
 * they need no key and do not count toward the rate limit. Put them out of the public's reach
 * at the proxy (docs/deployment.md). A plugin without encapsulation: its hook measures every route.
 */
export const operationsRoutes = fp(async function operationsRoutes(
  app: FastifyInstance,
  { database, blobs, redis, conversionIndex, metrics }: OperationsOptions & { metrics: Metrics },
) {
  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) };
    metrics.requests.inc(labels);
    metrics.latency.observe(labels, reply.elapsedTime / 1000);
  });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'alive' }));

  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    const checks = {
      database: await probe(() => sql`select 1`.execute(database.db)),
      blobStore: await probe(() => blobs.check()),
      redis: redis ? await probe(() => redis.ping()) : ('not configured' as CheckResult),
      conversionIndex: conversionIndex().state,
    };
    for (const [name, result] of Object.entries(checks)) {
      if (result === 'unreachable') request.log.error({ check: name }, `readiness: ${name} is unreachable`);
    }
    // Without Redis the service still answers correctly, only unlimited; without its index of
    // conversions (or while it catches up) everything but questions about conversions: degraded, not down.
    const ready = checks.database === 'ok' && checks.blobStore === 'ok';
    const degraded = checks.redis === 'unreachable' || checks.conversionIndex !== 'ok';
    const status = !ready ? 'unavailable' : degraded ? 'degraded' : 'ready';
    return reply.code(ready ? 200 : 503).send({ status, checks });
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
});

async function probe(check: () => Promise<unknown>, timeoutMs = 2000): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch {
    return 'unreachable';
  } finally {
    clearTimeout(timer);
  }
}
