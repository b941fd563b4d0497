import http from 'node:http';
import compress from '@fastify/compress';
import cors from '@fastify/cors';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { AccountService } from './accounts/service.js';
import { PUBLIC_PREFIX, publicAssetRoutes } from './assets/public-routes.js';
import { assetRoutes } from './assets/routes.js';
import { AssetService } from './assets/service.js';
import { sweepOrphanedBlobs } from './assets/sweeper.js';
import type { Config } from './config.js';
import { consoleRoutes } from './console/routes.js';
import { conversionRoutes } from './conversions/routes.js';
import { busy, indexTooSlow, indexUnavailable, shuttingDown, tooSlow } from './errors.js';
import { ConversionService } from './conversions/service.js';
import { openConversionQuestions } from './conversions/questions.js';
import { IndexTooSlowError, IndexUnavailableError } from './db/columnar/columnar-index.js';
import type { Database } from './db/database.js';
import { authenticate } from './http/authenticate.js';
import { answerClientError } from './http/client-error.js';
import { closeAfterAnswer } from './http/close-after-answer.js';
import { apiCors } from './http/cors.js';
import { errorHandler, notFoundHandler } from './http/error-handler.js';
import { answerFrameworkError, ignoreUnknownExpectations, refuseWithoutHost } from './http/framework-errors.js';
import { Metrics, operationsRoutes } from './http/operations.js';
import { registerRateLimit } from './http/rate-limit.js';
import { openApiOptions } from './http/openapi.js';
import { requestIdOf } from './http/request-id.js';
import { openRedis } from './http/redis.js';
import { publicUrlOf } from './http/public-url.js';
import { serializeRequest } from './http/request-log.js';
import type { BlobStore } from './storage/blob-store.js';
import { FileBlobStore } from './storage/file-blob-store.js';
import { cartEventRoutes, cartHookRoutes } from './carts/routes.js';
import { CartService } from './carts/service.js';

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

/** Node's own deadline for a request's headers, kept unless the whole request's is shorter. */
const HEADERS_TIMEOUT_MS = 60_000;

/** Answers up to this size (a list page, most summaries) are gzipped in one call on the event loop, about 0.2 ms for a 95 KB page. */
const SYNC_GZIP_BYTES = 256 * 1024;
/** zlib's level 3: a page a fifth larger than at its default 6, in a third of the time. */
const GZIP_LEVEL = 3;

/**
 * Node compares requests with their deadlines only every so often (30 s unless told): a tenth
 * of the request deadline cuts a request off at most a tenth late, checking no more than ten
 * times a second.
 */
function deadlineCheckInterval(requestTimeoutMs: number): number {
  return Math.min(30_000, Math.max(100, Math.floor(requestTimeoutMs / 10)));
}

/**
 * Builds the whole HTTP application without listening, so that tests can `inject` into it.
 * The database is opened (and migrated) by the caller, who also closes it.
 */
export async function buildApp({
  config,
  database,
  blobs = new FileBlobStore(config.dataDir),
  redisNamespace = 'acds:rate:',
}: AppOptions): Promise<FastifyInstance> {
  const deadlines = { headersTimeoutMs: Math.min(HEADERS_TIMEOUT_MS, config.requestTimeoutMs), requestTimeoutMs: config.requestTimeoutMs };
  const app = Fastify({
    logger: { level: config.logLevel, serializers: { req: serializeRequest } },
    // Without these Node waits for ever on a client that sends slowly or stops sending, keeping
    // its socket and its upload's temporary bytes.
    requestTimeout: deadlines.requestTimeoutMs,
    connectionTimeout: config.idleTimeoutMs,
    http: {
      headersTimeout: deadlines.headersTimeoutMs,
      connectionsCheckingInterval: deadlineCheckInterval(config.requestTimeoutMs),
      // refuseWithoutHost answers it instead, with a message and a request id.
      requireHostHeader: false,
    },
    clientErrorHandler: answerClientError(deadlines),
    trustProxy: config.trustProxy ?? false,
    genReqId: (request) => requestIdOf(request.headers),
    ajv: { customOptions: { removeAdditional: false } },
    frameworkErrors: answerFrameworkError,
    // The router refuses longer path segments before any route sees them (a guard for regular
    // expressions in paths, which no route here has): any segment a request can carry reaches
    // its route, or the 404 of an unknown one.
    routerOptions: { maxParamLength: http.maxHeaderSize },
    return503OnClosing: false,
  });

  const accounts = new AccountService(database.db);
  const questions = openConversionQuestions(config, database, (message) => app.log.info(message));
  app.addHook('onClose', () => questions.close());
  // Started means ready to answer, if not yet caught up; a service whose index cannot open still serves assets.
  await questions.opened;
  const conversions = new ConversionService(database, questions);
  const assets = new AssetService(database, blobs);
  const carts = new CartService(database);
  sweepOrphanedBlobs(app, assets, { shared: config.s3 !== undefined });
  const metrics = new Metrics(database, questions.status);
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
  app.addHook('onRequest', refuseWithoutHost);
  ignoreUnknownExpectations(app.server);
  // Closing reaps idle connections only: a request in flight when it starts would keep its
  // keep-alive connection, and the close, open. Such answers end their connection.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A request that arrives meanwhile is refused as every error is answered (Fastify's own 503,
  // return503OnClosing, is an object without the request id).
  app.addHook('onRequest', async () => {
    if (closing) throw shuttingDown();
  });
  // An answer given before the request's body has all arrived (an upload refused part way)
  // ends the connection too, so that the client stops sending the rest. (`complete` is
  // undefined in injected requests, which have no connection.)
  app.addHook('onSend', async (request, reply) => {
    if (request.raw.complete === false) closeAfterAnswer(request, reply);
    else if (closing) reply.header('connection', 'close');
  });
  app.setErrorHandler((error, request, reply) => errorHandler(databaseAnswer(database, error, config) ?? (error as FastifyError), request, reply));
  app.setNotFoundHandler(notFoundHandler);

  await app.register(swagger, openApiOptions(config.publicUrl));
  await app.register(swaggerUi, { routePrefix: '/docs' });
  // The document is made from every route's schema the first time it is asked for, which takes
  // a tenth of a second and would hold up every request meanwhile: it is made once, as the
  // service starts listening, and kept as the text sent.
  let openApiText: string | undefined;
  const openApiDocument = () => (openApiText ??= JSON.stringify(app.swagger()));
  app.addHook('onListen', async () => {
    openApiDocument();
  });
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(openApiDocument()));
  const onRejected = () => metrics.rateLimitRejections.inc();
  const rateLimitShared = { ipv6PrefixLength: config.rateLimitIpv6Prefix, redis, onRejected };
  await app.register(publicAssetRoutes, {
    prefix: PUBLIC_PREFIX,
    assets,
    blobs,
    rateLimit: { ...config.publicRateLimit, ...rateLimitShared, redisNamespace: `${redisNamespace}public:` },
  });
  await app.register(operationsRoutes, { database, blobs, redis, conversionIndex: questions.status, metrics });
  await app.register(consoleRoutes);
  await app.register(cartHookRoutes, {
    carts,
    metrics,
    rateLimit: { ...config.hookRateLimit, ...rateLimitShared, redisNamespace: `${redisNamespace}hooks:` },
  });

  await app.register(
    async (api) => {
      // Before the limit and the key: a browser's preflight carries neither, and is answered here.
      if (config.corsOrigins.length > 0) await api.register(cors, apiCors(config.corsOrigins));
      await registerRateLimit(api, { ...config.rateLimit, ...rateLimitShared, redisNamespace });
      await api.register(authenticate, { accounts });
      api.setNotFoundHandler(notFoundHandler);
      // Answers in gzip when the client accepts it: a page of 100 conversions is about 95 KB of
      // JSON and 11 KB gzipped. Not brotli, whose default level costs many times gzip's. An answer
      // up to SYNC_GZIP_BYTES is compressed in one call rather than through a stream, whose
      // hops to libuv's pool cost a page more time than compressing it.
      // Requests are read as sent: no inflating of compressed bodies past the upload limits.
      await api.register(compress, {
        encodings: ['gzip'],
        threshold: 1024,
        syncThreshold: SYNC_GZIP_BYTES,
        zlibOptions: { level: GZIP_LEVEL },
        customTypes: /^(application\/(json|x-ndjson)|text\/csv)\b/,
        globalDecompression: false,
      });
      // The asset form reader (src/assets/form.ts) gives the limits, its own and busboy's.
      await api.register(multipart);
      await api.register(conversionRoutes, { conversions });
      await api.register(cartEventRoutes, { carts });
      await api.register(assetRoutes, { assets, blobs, limits, publicUrl: () => publicUrlOf(config, app.server) });
    },
    { prefix: '/api/v1' },
  );

  return app;
}

/** The answer to a database error that says the request may simply be sent again: 503 and why. */
function databaseAnswer(database: Database, error: unknown, config: Config) {
  if (database.isStatementTimeout(error)) return tooSlow(config.requestStatementTimeoutMs);
  if (error instanceof IndexTooSlowError) return indexTooSlow(error.limitMs, error.percentDone, error.secondsLeft);
  if (error instanceof IndexUnavailableError) return indexUnavailable();
  if (database.isBusy(error)) return busy();
  return undefined;
}
