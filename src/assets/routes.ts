import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { badRequest, notFound } from '../errors.js';
import { ErrorMessage, ListEnvelope, sendListPage, NotModified, listQueryDocs, documentationOnly } from '../http/list-schema.js';
import { FAILURES_ARE_400 } from '../http/openapi.js';
import { sendJson } from '../http/reply.js';
import { sendBytes } from '../http/send-bytes.js';
import type { BlobStore } from '../storage/blob-store.js';
import { readAssetForm, type FormLimits } from './form.js';
import { assetCatalogue, AssetEntry, AssetFormFields, FORM_FIELDS } from './schema.js';
import type { AssetRow } from './repository.js';
import type { AssetService } from './service.js';

export interface AssetRouteOptions {
  assets: AssetService;
  blobs: BlobStore;
  limits: FormLimits;
  /** What every `public_url` starts with (src/http/public-url.ts). */
  publicUrl: () => string;
}

const IdParams = Type.Object({ id: Type.String({ description: 'The asset id' }) });
const FORM_DOC = `multipart/form-data with the fields ${FORM_FIELDS.join(', ')}. See the API reference.`;
/** Every failed create, update or delete of an asset is a 400 (docs/api.md, "Assets"), whatever went wrong. */
const WRITE = { config: { writeErrorsAre400: true }, validatorCompiler: documentationOnly };
// What a write's schema says of it: its failures are 400s (WRITE's writeErrorsAre400).
const WRITE_SCHEMA = { [FAILURES_ARE_400]: true };

/** Asset ids in paths: a number, or else an asset that does not exist. */
function parseId(raw: string, forWrite: boolean): number {
  const id = Number(raw);
  if (/^\d{1,15}$/.test(raw) && id >= 1) return id;
  throw forWrite ? badRequest(`there is no asset with id ${raw.slice(0, 40)}`) : notFound(`there is no asset with id ${raw.slice(0, 40)}`);
}

/** The routes of assets; their schemas type each request's params and each answer (TypeBoxTypeProvider). */
export const assetRoutes: FastifyPluginAsyncTypebox<AssetRouteOptions> = async (app, { assets, blobs, limits, publicUrl }) => {
  app.get(
    '/assets',
    {
      schema: {
        summary: 'List assets',
        operationId: 'listAssets',
        description: 'One page of 100 assets in ascending id order, filtered by column. See the API reference for the filter forms.',
        tags: ['assets'],
        querystring: listQueryDocs(assetCatalogue),
        response: {
          200: ListEnvelope(AssetEntry, 'A page of the matching assets, with their exact count'),
          304: NotModified,
          400: ErrorMessage,
          401: ErrorMessage,
        },
      },
      validatorCompiler: documentationOnly,
    },
    // The page is JSON already (entries stored with their rows, src/assets/entry.ts): sent as it is.
    async (request, reply) => {
      return sendListPage(request, reply, assets.list(request.accountId, request.dataVersion, request.query, publicUrl()));
    },
  );

  app.post(
    '/assets',
    {
      ...WRITE,
      schema: {
        ...WRITE_SCHEMA,
        summary: 'Create an asset',
        operationId: 'createAsset',
        description: `From content, an uploaded file or a remote url (exactly one). ${FORM_DOC}`,
        tags: ['assets'],
        consumes: ['multipart/form-data'],
        body: AssetFormFields,
        response: { 200: Type.Object({ id: Type.String({ description: 'The new asset id' }) }, { description: 'Created' }), 400: ErrorMessage },
      },
    },
    async (request, reply) => {
      const form = await readAssetForm(request, assets, request.accountId, limits, 'create');
      const id = await assets.create(request.accountId, form);
      return sendJson(reply, 200, { id: String(id) });
    },
  );

  app.get(
    '/assets/:id',
    {
      schema: { summary: 'Get an asset', operationId: 'getAsset', tags: ['assets'], params: IdParams, response: { 200: AssetEntry, 404: ErrorMessage } },
      validatorCompiler: documentationOnly,
    },
    (request) => assets.get(request.accountId, parseId(request.params.id, false), publicUrl()),
  );

  app.get(
    '/assets/:id/content',
    {
      schema: {
        summary: "Download an asset's bytes",
        operationId: 'getAssetContent',
        description: 'A local asset: its bytes, with ETag, Last-Modified and byte ranges. A remote asset: 302 to its url.',
        tags: ['assets'],
        params: IdParams,
        response: {
          200: {
            description: 'The bytes, with the Content-Type they are served with',
            content: { '*/*': { schema: Type.Unsafe<Buffer>(Type.String({ format: 'binary' })) } },
          },
          206: {
            description: 'The one byte range asked for (Range), with Content-Range',
            content: { '*/*': { schema: Type.Unsafe<Buffer>(Type.String({ format: 'binary' })) } },
          },
          302: Type.Null({ description: 'A remote asset: Location is its url (to be fetched without the API key, which is for this service alone)' }),
          304: Type.Null({ description: 'The bytes named by If-None-Match (or not modified since If-Modified-Since) are still current: no body' }),
          404: ErrorMessage,
          416: Type.Null({ description: 'The range asked for lies outside the bytes: Content-Range says their size' }),
        },
      },
      validatorCompiler: documentationOnly,
      // Bytes as stored, so that ranges and Content-Length hold; public delivery sends them so too.
      compress: false,
    },
    async (request, reply) => {
      const id = parseId(request.params.id, false);
      return sendAssetBytes(request, reply, blobs, () => assets.forDownload(request.accountId, id), 'private, no-cache');
    },
  );

  app.put(
    '/assets/:id',
    {
      ...WRITE,
      schema: {
        ...WRITE_SCHEMA,
        summary: 'Update an asset',
        operationId: 'updateAsset',
        description: `Rename (name only), move (folder only), replace the bytes (content or file), make it remote (url), or change its attributes. ${FORM_DOC}`,
        tags: ['assets'],
        consumes: ['multipart/form-data'],
        params: IdParams,
        body: AssetFormFields,
        response: { 200: Type.Literal(true, { description: 'Updated' }), 400: ErrorMessage },
      },
    },
    async (request, reply) => {
      const id = parseId(request.params.id, true);
      const form = await readAssetForm(request, assets, request.accountId, limits, 'update');
      await assets.update(request.accountId, id, form);
      return sendJson(reply, 200, true);
    },
  );

  app.delete(
    '/assets/:id',
    {
      ...WRITE,
      schema: {
        ...WRITE_SCHEMA,
        summary: 'Delete an asset',
        operationId: 'deleteAsset',
        tags: ['assets'],
        params: IdParams,
        response: { 200: Type.Literal(true, { description: 'Deleted' }), 400: ErrorMessage },
      },
    },
    async (request, reply) => {
      await assets.remove(request.accountId, parseId(request.params.id, true));
      return sendJson(reply, 200, true);
    },
  );
};

/**
 * Serves the bytes of the asset `find` finds (it throws 404s), or redirects to a remote asset's
 * url. Bytes replaced or deleted between the lookup and their read are gone from the store: the
 * asset is looked up again, and serves its new bytes or is not found. Bytes missing under a key
 * that the asset still names are an error.
 */
export async function sendAssetBytes(request: FastifyRequest, reply: FastifyReply, blobs: BlobStore, find: () => Promise<AssetRow>, cacheControl: string) {
  for (let missing: string | undefined; ; ) {
    const row = await find();
    // As checkUrl stores it; urls stored before it did may hold characters a header cannot.
    if (!row.blob_key) return reply.redirect(new URL(row.url!).href, 302);
    if (row.blob_key === missing) throw new Error(`asset ${row.id}: the blob store has no bytes under ${missing}`);
    if (await sendBytes(request, reply, blobs, bytesOf(row), cacheControl)) return reply;
    missing = row.blob_key;
  }
}

function bytesOf(row: { blob_key: string | null; size: number | null; content_type: string | null; etag: string | null; updated_at: number }) {
  return {
    blobKey: row.blob_key!,
    size: row.size ?? 0,
    contentType: row.content_type ?? 'application/octet-stream',
    etag: row.etag ?? '',
    modifiedAt: new Date(row.updated_at * 1000),
  };
}
