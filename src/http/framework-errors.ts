import type { Server } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { NO_SUCH_PUBLIC_ASSET, PUBLIC_PREFIX } from '../assets/public-routes.js';
import { badRequest } from '../errors.js';
import { notFoundHandler } from './error-handler.js';
import { sendJson } from './reply.js';
import { urlForLog } from './request-log.js';

/**
 * Errors Fastify meets before routing, answered as every other error is. No hook has run yet,
 * so the request id is set here. A malformed percent-encoding is a 400 that says so, but under
 * /public/ it is a 404 like any other path that is not an asset's: no public URL is malformed.
 * Anything else the router refuses (a path segment longer than it takes) names no route: a 404.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  request.log.info({ code: error.code, url: urlForLog(request.url) }, 'request refused before routing');
  reply.header('x-request-id', request.id);
  if (request.url.startsWith(`${PUBLIC_PREFIX}/`)) return sendJson(reply, 404, NO_SUCH_PUBLIC_ASSET);
  if (error.code === 'FST_ERR_BAD_URL') return sendJson(reply, 400, 'the URL is malformed: check its percent-encoding');
  return notFoundHandler(request, reply);
}

/**
 * HTTP/1.1 asks for a Host header. Node refuses a request without one with a bare 400 of its
 * own, without a body or a request id, unless told to let it through (requireHostHeader):
 * this hook refuses it instead, as every other error is answered.
 */
export async function refuseWithoutHost(request: FastifyRequest): Promise<void> {
  if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
    throw badRequest('an HTTP/1.1 request needs a Host header, such as Host: acds.example.com');
  }
}

/**
 * Node answers an Expect header other than 100-continue with a bare 417 of its own. HTTP lets a
 * server ignore such an expectation, and the service does: the request is answered as any other.
 */
export function ignoreUnknownExpectations(server: Server): void {
  server.on('checkExpectation', (request, response) => server.emit('request', request, response));
}
