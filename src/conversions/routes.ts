import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { TIME_BUCKETS } from '../db/columnar/protocol.js';
import { documentationOnly, ErrorMessage, filterQueryDocs, ListEnvelope, sendListPage, listQueryDocs, NotModified } from '../http/list-schema.js';
import { conversionCatalogue, ConversionEntry, EXAMPLE_CONVERSION } from './schema.js';
import type { ConversionsAsOf } from './questions.js';
import type { ConversionService } from './service.js';
import { ConversionSummary, MAX_GROUP_KEYS } from './summary.js';
import { CSV_HEADER, csvRow, EXPORT_CONTENT_TYPES, EXPORT_FORMATS, type ExportFormat } from './export.js';

const ExportParams = {
  format: Type.Optional(
    Type.String({
      enum: [...EXPORT_FORMATS],
      description: 'ndjson (each line a conversion as the list has it) or csv; absent: from the Accept header, else ndjson',
    }),
  ),
};

// The example conversion of the OpenAPI document as each format writes it.
const EXPORT_EXAMPLES: Record<ExportFormat, string> = { ndjson: `${JSON.stringify(EXAMPLE_CONVERSION)}\n`, csv: `${CSV_HEADER}${csvRow(EXAMPLE_CONVERSION)}` };

const ExportResponse = Type.Unsafe<Readable>({
  description: 'The matching conversions in ascending id order, streamed in the format asked for',
  headers: {
    'content-disposition': Type.String({ description: 'attachment; filename="conversions-YYYY-MM-DD.ndjson" (or .csv)' }),
  },
  content: Object.fromEntries(
    EXPORT_FORMATS.map((format) => [
      EXPORT_CONTENT_TYPES[format].split(';')[0],
      {
        schema: Type.String({ description: format === 'csv' ? 'A header row, then a row per conversion' : 'A line per conversion, each the list entry' }),
        example: EXPORT_EXAMPLES[format],
      },
    ]),
  ),
});

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
        operationId: 'listConversions',
        description: 'One page of 100 conversions in ascending id order, filtered by column. See the API reference for the filter forms.',
        tags: ['conversions'],
        querystring: listQueryDocs(conversionCatalogue),
        response: {
          200: ListEnvelope(ConversionEntry, 'A page of the matching conversions, with their exact count'),
          304: NotModified,
          400: ErrorMessage,
          401: ErrorMessage,
        },
      },
      validatorCompiler: documentationOnly,
    },
    // The page is JSON already (entries stored with their rows, entry-json.ts): sent as it is.
    async (request, reply) => {
      return sendListPage(request, reply, conversions.list(asOf(request), request.query));
    },
  );

  app.get(
    '/conversions/summary',
    {
      schema: {
        summary: 'Sum conversions by group',
        operationId: 'summarizeConversions',
        description:
          "Counts and sums of the conversions matching the list's filters, grouped by time buckets and columns, with totals over all of them. " +
          'See the API reference.',
        tags: ['conversions'],
        querystring: filterQueryDocs(conversionCatalogue, SummaryParams),
        response: { 200: ConversionSummary, 400: ErrorMessage, 401: ErrorMessage },
      },
      validatorCompiler: documentationOnly,
    },
    (request) => conversions.summary(asOf(request), request.query),
  );

  app.get(
    '/conversions/export',
    {
      schema: {
        summary: 'Export every matching conversion',
        operationId: 'exportConversions',
        description:
          "Every conversion matching the list's filters in ascending id order, streamed as NDJSON or CSV; gzip when the client accepts it. " +
          'A broken download resumes with id.gt set to the last id received. See the API reference.',
        tags: ['conversions'],
        querystring: filterQueryDocs(conversionCatalogue, ExportParams),
        // A stream, which Fastify sends as it is; the schema documents it.
        response: { 200: ExportResponse, 400: ErrorMessage, 401: ErrorMessage },
      },
      validatorCompiler: documentationOnly,
    },
    async (request, reply) => {
      const { format, chunks } = conversions.export(asOf(request), request.query, request.headers.accept);
      const date = new Date().toISOString().slice(0, 10);
      const asDownload = () =>
        reply
          .type(EXPORT_CONTENT_TYPES[format])
          .header('content-disposition', `attachment; filename="conversions-${date}.${format}"`)
          .header('cache-control', 'private, no-store')
          .header('vary', 'accept');
      // Node throws a HEAD's body away without ever making its writer wait: read, it would be
      // every row at full speed, for nothing.
      // Through compress all the same, for the GET's Content-Encoding and Vary.
      if (request.method === 'HEAD') return asDownload().compress(Readable.from([]));
      // Its first chunk is awaited before the answer begins: a failure to start (the index too
      // slow to answer) is an error answer, not a download broken at its first byte, and one
      // without the download's headers, which would have a browser save the message as the file.
      const reading = chunks();
      const first = await reading.next();
      asDownload();
      // Compressed when Accept-Encoding allows gzip (which adds accept-encoding to Vary). A
      // failure part way ends the response early: the client sees a broken download. A byte
      // stream, not one of objects: those buffer 16 batches ahead of a reader, bytes one.
      return reply.compress(Readable.from(startingWith(first, reading), { objectMode: false }));
    },
  );
};

/** The account's conversions as the request found them when it was authenticated. */
function asOf(request: FastifyRequest): ConversionsAsOf {
  return { accountId: request.accountId, newestId: request.newestConversionId };
}

/**
 * The chunks of `rest`, the one already read from it first. A plain iterator rather than a
 * generator: a stream ended before its first read still ends `rest` (its return), which a
 * generator that never started would not pass on.
 */
function startingWith<T>(first: IteratorResult<T>, rest: AsyncGenerator<T>): AsyncIterableIterator<T> {
  let unread: IteratorResult<T> | undefined = first;
  return {
    next: () => {
      const result = unread ?? rest.next();
      unread = undefined;
      return Promise.resolve(result);
    },
    return: (value?: unknown) => rest.return(value as T),
    throw: (error?: unknown) => rest.throw(error),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
