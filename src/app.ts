import { randomUUID } from 'node:crypto';
import http from 'node:http';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import { AccountService } from './accounts/service.js';
import { publicAssetRoutes } from './assets/public-routes.js';
import { assetRoutes } from './assets/routes.js';
import { AssetService } from './assets/service.js';
import type { Config } from './config.js';
import { conversionRoutes } from './conversions/routes.js';
import { ConversionService } from './conversions/service.js';
import type { Database } from './db/database.js';
import { authenticate } from './http/authenticate.js';
import { errorHandler, notFoundHandler } from './http/error-handler.js';
import { answerFrameworkError } from './http/framework-errors.js';
import { Metrics, operationsRoutes } from './http/operations.js';
import { registerRateLimit } from './http/rate-limit.js';
import { openRedis } from './http/redis.js';
import { publicUrlOf } from './http/public-url.js';
import { serializeRequest } from './http/request-log.js';
import type { BlobStore } from './storage/blob-store.js';
import { FileBlobStore } from './storage/file-blob-store.js';

export interface AppOptions {
  config: Config;
  database: Database;
  /** Where asset bytes live; the local file system under DATA_DIR unless given. The caller closes it. */
  blobs?: BlobStore;
  /** Prefix of the rate-limit counters in Redis; instances that share it share the limit. */
  redisNamespace?: string;
}

/** The largest `content` field: text sent inline; anything larger goes up as a file. */
export const MAX_CONTENT_BYTES = 16 * 1024 * 1024;

/**
 * Builds the whole HTTP application without listening, so that tests can `inject` into it.
 * The database is opened (and migrated) by the caller, who also closes it.
 */
export async function buildApp({ config, database, blobs = new FileBlobStore(config.dataDir), redisNamespace = 'acds:rate:' }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: config.logLevel, serializers: { req: serializeRequest } },
    trustProxy: config.trustProxy ?? false,
    genReqId: () => randomUUID(),
    ajv: { customOptions: { removeAdditional: false } },
    frameworkErrors: answerFrameworkError,
    // The router refuses longer path segments before any route sees them (a guard for regular
    // expressions in paths, which no route here has): any segment a request can carry reaches
    // its route, or the 404 of an unknown one.
    routerOptions: { maxParamLength: http.maxHeaderSize },
  });

  const accounts = new AccountService(database.db);
  const conversions = new ConversionService(database);
  const assets = new AssetService(database, blobs);
  const metrics = new Metrics(database);
  const redis = config.redisUrl ? await openRedis(config.redisUrl, app.log) : undefined;
  if (redis) {
    app.addHook('onClose', async () => {
      await redis.quit().catch(() => redis.disconnect());
    });
  }
  const limits = { maxUploadBytes: config.maxUploadBytes, maxContentBytes: Math.min(MAX_CONTENT_BYTES, config.maxUploadBytes) };

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Closing reaps idle connections only: a request in flight when it starts would keep its
  // keep-alive connection, and the close, open. Such answers end their connection.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Asset and Conversion Data Service',
        version: '1',
        description: 'See docs/api.md in the repository for the full reference.',
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      security: [{ apiKey: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  const onRejected = () => metrics.rateLimitRejections.inc();
  const rateLimitShared = { ipv6PrefixLength: config.rateLimitIpv6Prefix, redis, onRejected };
  await app.register(publicAssetRoutes, {
    assets,
    blobs,
    rateLimit: { ...config.publicRateLimit, ...rateLimitShared, redisNamespace: `${redisNamespace}public:` },
  });
  await app.register(operationsRoutes, { database, blobs, redis, metrics });

  await app.register(
    async (api) => {
      await registerRateLimit(api, { ...config.rateLimit, ...rateLimitShared, redisNamespace });
      await api.register(authenticate, { accounts });
      api.setNotFoundHandler(notFoundHandler);
      await api.register(multipart, {
        limits: { fileSize: limits.maxUploadBytes, fieldSize: limits.maxContentBytes, files: 1, fields: 20, parts: 21 },
      });
      await api.register(conversionRoutes, { conversions });
      await api.register(assetRoutes, { assets, blobs, limits, publicUrl: () => publicUrlOf(config, app.server) });
    },
    { prefix: '/api/v1' },
  );

  return app;
}
