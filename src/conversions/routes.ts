import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorMessage, ListEnvelope, NotModified, listPageJson, listQueryDocs, documentationOnly } from '../http/list-schema.js';
import { listNotModified } from '../http/conditional.js';
import { JSON_CONTENT_TYPE } from '../http/reply.js';
import { conversionCatalogue, ConversionEntry } from './schema.js';
import type { ConversionService } from './service.js';

/** The route of conversions; its schemas type the request's query and the answers (TypeBoxTypeProvider). */
export const conversionRoutes: FastifyPluginAsyncTypebox<{ conversions: ConversionService }> = async (app, { conversions }) => {
  app.get(
    '/conversions',
    {
      schema: {
        summary: 'List conversions',
        description: 'One page of 100 conversions in ascending id order, filtered by column. ' + 'See the API reference for the filter forms.',
        tags: ['conversions'],
        querystring: listQueryDocs(conversionCatalogue),
        response: { 200: ListEnvelope(ConversionEntry), 304: NotModified, 400: ErrorMessage, 401: ErrorMessage },
      },
      validatorCompiler: documentationOnly,
    },
    // The page is JSON already (entries stored with their rows, entry-json.ts): sent as it is.
    async (request, reply) => {
      const list = conversions.list(request.accountId, request.dataVersion, request.query);
      if (listNotModified(request, reply, list.etag)) return reply.code(304).send();
      return reply.type(JSON_CONTENT_TYPE).send(listPageJson(await list.read()));
    },
  );
};
