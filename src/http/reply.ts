import type { FastifyReply } from 'fastify';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Sends any JSON value, including a bare string or `true`, as JSON. Fastify would send a
 * bare string as text/plain (field notes).
 */
export function sendJson(reply: FastifyReply, statusCode: number, value: unknown): FastifyReply {
  return reply.code(statusCode).type(JSON_CONTENT_TYPE).send(JSON.stringify(value));
}
