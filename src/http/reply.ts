import type { FastifyReply } from 'fastify';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Sends any JSON value, including a bare string or `true`, as JSON. Fastify sends a bare
 * string given without a content type as text/plain, but our bodies (error messages, `true`)
 * are JSON, `application/json; charset=utf-8`.
 */
export function sendJson(reply: FastifyReply, statusCode: number, value: unknown): FastifyReply {
  return reply.code(statusCode).type(JSON_CONTENT_TYPE).send(JSON.stringify(value));
}
