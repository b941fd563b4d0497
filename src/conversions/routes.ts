import type { FastifyInstance } from 'fastify';
import { ErrorMessage, ListEnvelope, listQueryDocs, documentationOnly } from '../http/list-schema.js';
import { conversionCatalogue, ConversionEntry } from './schema.js';
import type { ConversionService } from './service.js';

export async function conversionRoutes(app: FastifyInstance, { conversions }: { conversions: ConversionService }) {
  app.get(
    '/conversions',
    {
      schema: {
        summary: 'List conversions',
        description:
          'One page of 100 conversions in ascending id order, filtered by column. ' +
          'See the API reference for the filter forms.',
        tags: ['conversions'],
        querystring: listQueryDocs(conversionCatalogue),
        response: { 200: ListEnvelope(ConversionEntry), 400: ErrorMessage, 401: ErrorMessage },
      },
      validatorCompiler: documentationOnly,
    },
    (request) => conversions.list(request.accountId, request.query as Record<string, string | string[]>),
  );
}
