import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { sendJson } from './reply.js';

/**
 * The one place where errors become responses: a JSON string a person can act on for every
 * 4xx and for the service's own 503 (a question stopped at its time limit), an empty 429, and
 * for anything unexpected a bare "internal error" with the details in the log under the
 * request id.
 */
export function errorHandler(error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) {
  const status = error.statusCode ?? 500;
  if (status === 429) return reply.code(429).send();
  if (status >= 400 && status < 500) return sendJson(reply, clientStatus(request, status), clientMessage(error));
  if (error instanceof AppError) {
    request.log.warn({ err: error }, 'request stopped');
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
    return sendJson(reply, clientStatus(request, status), error.message);
  }
  request.log.error({ err: error }, 'request failed');
  return sendJson(reply, 500, 'internal error');
}

function clientMessage(error: FastifyError | AppError): string {
  if (error instanceof AppError) return error.message;
  if (error.validation) return `${error.validationContext ?? 'request'} ${error.validation[0]?.message ?? 'is invalid'}`.trim();
  return error.message;
}

/** A failed create, update or delete of an asset is a 400 (docs/api.md, "Assets"), whatever else went wrong. */
function clientStatus(request: FastifyRequest, status: number): number {
  if (status === 401) return status;
  const writeErrorsAre400 = (request.routeOptions.config as { writeErrorsAre400?: boolean } | undefined)?.writeErrorsAre400;
  return writeErrorsAre400 ? 400 : status;
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0]!.slice(0, 200);
  return sendJson(reply, 404, `there is no ${request.method} ${path}; see /docs for the API`);
}
