import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { sendJson } from './reply.js';

/**
 * The one place where errors become responses: a JSON string a person can act on for every
 * 4xx, an empty 429, and for anything unexpected a bare "internal error" with the details in
 * the log under the request id.
 */
export function errorHandler(error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AppError) return sendJson(reply, error.statusCode, error.message);
  const status = error.statusCode ?? 500;
  if (status === 429) return reply.code(429).send();
  if (error.validation) return sendJson(reply, 400, `${error.validationContext ?? 'request'} ${error.validation[0]?.message ?? 'is invalid'}`.trim());
  if (status >= 400 && status < 500) return sendJson(reply, status, error.message);
  request.log.error({ err: error }, 'request failed');
  return sendJson(reply, 500, 'internal error');
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0]!.slice(0, 200);
  return sendJson(reply, 404, `there is no ${request.method} ${path}; see /docs for the API`);
}
