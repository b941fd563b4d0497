import type { FastifyRequest } from 'fastify';

/** Enough of a URL or header to recognise a request by; a client may send up to the 16 KiB Node accepts. */
const LOGGED_CHARS = 200;

/** Text from a request as the log shows it: at most LOGGED_CHARS characters, saying how long it was when cut. */
export function shortForLog(text: string): string {
  return text.length <= LOGGED_CHARS ? text : `${text.slice(0, LOGGED_CHARS)}... (${text.length} characters)`;
}

/**
 * Each request's "incoming request" log line: what Fastify's own serializer writes, with the URL
 * and Host cut to LOGGED_CHARS, so that a client sending huge ones cannot flood the log.
 */
export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: shortForLog(request.url),
    host: shortForLog(request.host),
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
