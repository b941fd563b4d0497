import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';
import { PUBLIC_CORS } from '../http/cors.js';
import { registerRateLimit, type RateLimitOptions } from '../http/rate-limit.js';
import type { BlobStore } from '../storage/blob-store.js';
import { sendAssetBytes } from './routes.js';
import type { AssetService } from './service.js';

/** Where public delivery is mounted: an asset's public URL is /public/{handle}/{publicId}. */
export const PUBLIC_PREFIX = '/public';
export const NO_SUCH_PUBLIC_ASSET = 'there is no such public asset';

/**
 * Public delivery: `/public/<account handle>/<asset public id>`, no key, readable from any
 * origin, outside the API's rate limit but under a generous ceiling of its own per client
 * address, counted apart. Both segments are checked against their exact shape and looked up in the database;
 * nothing from the URL ever reaches a file path, so nothing but the account's own local assets
 * can be served. docs/api.md, "Downloads and public delivery", has the rules a user sees.
 */
const HANDLE = /^[0-9a-f]{16}$/;
const PUBLIC_ID = /^[0-9a-f]{24}$/;
/** Fresh for five minutes, then revalidated by ETag: a replaced asset shows within minutes. */
const PUBLIC_CACHE = 'public, max-age=300, stale-while-revalidate=86400';

/** The route's path parameters, typed here: the route has no schema, being no part of the API document. */
interface PublicPath {
  Params: { handle: string; publicId: string };
}

export interface PublicAssetRouteOptions {
  assets: AssetService;
  blobs: BlobStore;
  rateLimit: RateLimitOptions;
}

/** Registered under the prefix `/public`, which keeps its preflight route to public URLs. */
export async function publicAssetRoutes(app: FastifyInstance, { assets, blobs, rateLimit }: PublicAssetRouteOptions) {
  // First, so that a preflight is answered before it counts against the limit.
  await app.register(cors, PUBLIC_CORS);
  // Caches keep these answers and show them to everyone: one client's count stays out of them.
  await registerRateLimit(app, { ...rateLimit, headersOnEveryAnswer: false });
  app.get<PublicPath>('/:handle/:publicId', { schema: { hide: true } }, async (request, reply) => {
    const { handle, publicId } = request.params;
    const find = async () => {
      const row = HANDLE.test(handle) && PUBLIC_ID.test(publicId) ? await assets.forPublicDelivery(handle, publicId) : undefined;
      if (!row) throw notFound(NO_SUCH_PUBLIC_ASSET);
      return row;
    };
    return sendAssetBytes(request, reply, blobs, find, PUBLIC_CACHE);
  });
}
