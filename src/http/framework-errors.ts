import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { NO_SUCH_PUBLIC_ASSET, PUBLIC_PATH_PREFIX } from '../assets/public-routes.js';
import { notFoundHandler } from './error-handler.js';
import { sendJson } from './reply.js';
import { shortForLog } from './request-log.js';

/**
 * Errors Fastify meets before routing, answered as every other error is. No hook has run yet,
 * so the request id is set here. A malformed percent-encoding is a 400 that says so, but under
 * /public/ it is a 404 like any other path that is not an asset's: no public URL is malformed.
 * Anything else the router refuses (a path segment longer than it takes) names no route: a 404.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  request.log.info({ code: error.code, url: shortForLog(request.url) }, 'request refused before routing');
  reply.header('x-request-id', request.id);
  if (request.url.startsWith(PUBLIC_PATH_PREFIX)) return sendJson(reply, 404, NO_SUCH_PUBLIC_ASSET);
  if (error.code === 'FST_ERR_BAD_URL') return sendJson(reply, 400, 'the URL is malformed: check its percent-encoding');
  return notFoundHandler(request, reply);
}
