import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { TIME_BUCKETS } from '../db/columnar/queries.js';
import { documentationOnly, ErrorMessage, filterQueryDocs, ListEnvelope, listPageJson, listQueryDocs, NotModified } from '../http/list-schema.js';
import { listNotModified } from '../http/conditional.js';
import { JSON_CONTENT_TYPE } from '../http/reply.js';
import { conversionCatalogue, ConversionEntry } from './schema.js';
import type { ConversionService } from './service.js';
import { ConversionSummary, MAX_GROUP_KEYS } from './summary.js';

const SummaryParams = {
  group_by: Type.Optional(
    Type.String({
      description: `Up to ${MAX_GROUP_KEYS} comma-separated keys: a time bucket of created_at (${TIME_BUCKETS.join(', ')}) or a text, whole-number or boolean column; tracking_codes groups by each code. Absent: one group of everything`,
      examples: ['day,utm_source'],
    }),
  ),
  tz: Type.Optional(Type.String({ description: 'The IANA time zone of the time buckets; default UTC', examples: ['America/New_York'] })),
};

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

  app.get(
    '/conversions/summary',
    {
      schema: {
        summary: 'Sum conversions by group',
        description:
          "Counts and sums of the conversions matching the list's filters, grouped by time buckets and columns, with totals over all of them. " +
          'See the API reference.',
        tags: ['conversions'],
        querystring: filterQueryDocs(conversionCatalogue, SummaryParams),
        response: { 200: ConversionSummary, 400: ErrorMessage, 401: ErrorMessage },
      },
      validatorCompiler: documentationOnly,
    },
    (request) => conversions.summary(request.accountId, request.dataVersion, request.query),
  );
};
