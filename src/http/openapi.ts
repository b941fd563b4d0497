import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';

type Document = Record<string, unknown> & { paths?: Record<string, Record<string, Operation>>; components?: Record<string, unknown> };
type Operation = { responses?: Record<string, unknown>; operationId?: string };

const header = (description: string, type: 'integer' | 'string') => ({ description, schema: { type } });

/** Headers on every answer of the API: the request's id, and where the API's limit stands. */
const HEADERS = {
  RequestId: header('The id of this request; the log has the details of an error under it', 'string'),
  RateLimitLimit: header('Requests allowed per window, per client', 'integer'),
  RateLimitRemaining: header('Requests left in the current window', 'integer'),
  RateLimitReset: header('Seconds until the window ends', 'integer'),
  RetryAfter: header('Seconds to wait before asking again', 'integer'),
};
const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
const COMMON_HEADERS = {
  'X-Request-Id': ref('RequestId'),
  'X-RateLimit-Limit': ref('RateLimitLimit'),
  'X-RateLimit-Remaining': ref('RateLimitRemaining'),
  'X-RateLimit-Reset': ref('RateLimitReset'),
};

const errorAnswer = (description: string, example: string, headers = {}) => ({
  description,
  headers: { ...COMMON_HEADERS, ...headers },
  content: { 'application/json': { schema: { type: 'string', description: 'What went wrong and how to fix it' }, example } },
});

/** The answers every operation of the API may give, by status. */
const SHARED_RESPONSES = {
  '400': [
    'BadRequest',
    errorAnswer('The request is not valid; the message names the parameter or field at fault', 'page must be a whole number of at least 1'),
  ],
  '401': ['Unauthorized', errorAnswer('No API key, or one that is not known', 'invalid API key')],
  '404': ['NotFound', errorAnswer('Nothing of the account has this id', 'there is no asset with id 12')],
  '429': [
    'TooManyRequests',
    {
      description: "Over the API's limit: an empty body; ask again after Retry-After seconds",
      headers: { ...COMMON_HEADERS, 'Retry-After': ref('RetryAfter') },
    },
  ],
  '500': ['InternalError', errorAnswer('The service failed; the message is generic and the log has the details under the request id', 'internal error')],
  '503': [
    'Unavailable',
    errorAnswer(
      'The database, or the index of conversions while it catches up after a large import, did not answer in time (STATEMENT_TIMEOUT_MS), the index of conversions could not open (it is opened again by itself), or the database was busy with another write; nothing was changed, so the request may be sent again (after Retry-After seconds where it is sent)',
      'the database took longer than 15 s over this request and it was stopped: ask again later (a list can also be narrowed by more selective filters)',
      { 'Retry-After': ref('RetryAfter') },
    ),
  ],
} as const;

/**
 * The options of @fastify/swagger: the document's frame (servers, security, tags), schemas named
 * by their `$id`, and the answers every operation shares, declared once and referred to.
 */
export function openApiOptions(publicUrl: string | undefined): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      info: {
        title: 'Asset and Conversion Data Service',
        version: '1',
        description: 'The assets a funnel embeds and the conversions its carts report. The API reference is docs/api.md in the repository.',
        license: { name: 'Proprietary' },
      },
      // Relative to the document when no public URL is configured: the service that serves it.
      servers: [{ url: publicUrl ?? '/', description: publicUrl ? 'This service' : 'The service that serves this document' }],
      tags: [
        { name: 'conversions', description: 'Completed purchases: listed, summed and exported' },
        { name: 'assets', description: 'Images, videos, scripts, stylesheets and texts that pages embed' },
        { name: 'carts', description: "Carts' notifications and the events they made" },
      ],
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      security: [{ apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`) },
    transformObject: (document) => ('openapiObject' in document ? withSharedResponses(document.openapiObject as Document) : document.swaggerObject),
  };
}

/**
 * Marks an operation whose every failure is a 400 (an asset's write, docs/api.md): it declares no
 * 503, which it never answers.
 */
export const FAILURES_ARE_400 = 'x-failures-are-400';

/**
 * Every operation of the API answers 400, 401, 429, 500 and 503 alike (and 404 where it declares one,
 * and no 503 where it is marked FAILURES_ARE_400): those answers become references to one
 * declaration each, with their headers.
 */
export function withSharedResponses(document: Document): Document {
  const responses: Record<string, unknown> = {};
  for (const [name, answer] of Object.values(SHARED_RESPONSES)) responses[name] = answer;
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).map(([path, operations]) => {
      if (!path.startsWith('/api/')) return [path, operations];
      const shared = Object.fromEntries(
        Object.entries(operations).map(([method, operation]) => {
          const declared = operation.responses ?? {};
          const answers: Record<string, unknown> = { ...declared };
          for (const [status, [name]] of Object.entries(SHARED_RESPONSES)) {
            const declares = status === '404' ? status in declared : status !== '503' || !(operation as Record<string, unknown>)[FAILURES_ARE_400];
            if (declares) answers[status] = { $ref: `#/components/responses/${name}` };
          }
          return [method, { ...operation, responses: answers }];
        }),
      );
      return [path, shared];
    }),
  );
  return { ...document, paths, components: { ...document.components, responses, headers: HEADERS } };
}
