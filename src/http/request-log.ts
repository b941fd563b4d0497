import type { FastifyRequest } from 'fastify';

/** Enough of a URL or header to recognise a request by; a client may send up to the 16 KiB Node accepts. */
const LOGGED_CHARS = 200;

/** Text from a request as the log shows it: at most LOGGED_CHARS characters, saying how long it was when cut. */
export function shortForLog(text: string): string {
  return text.length <= LOGGED_CHARS ? text : `${text.slice(0, LOGGED_CHARS)}... (${text.length} characters)`;
}

// A cart receiver's URL (src/carts/routes.ts): /hooks/<cart>/<token>, then perhaps a query string.
const RECEIVER_URL = /^\/hooks\/([^/?#]*)\/([^/?#]*)([^?#]*)(.*)$/s;
// As many of a token's characters as the receivers' listing shows.
const SHOWN_TOKEN_CHARACTERS = 6;

/**
 * A request's URL as the log shows it, cut to LOGGED_CHARS. A cart receiver's token is the whole
 * secret of an unsigned cart's receiver, kept only as a hash: the log shows as much of it as the
 * receivers' listing does. Its query string carries the buyer's name and address on carts that
 * notify by GET: the log says only that there was one.
 */
export function urlForLog(url: string): string {
  const receiver = RECEIVER_URL.exec(url);
  if (!receiver) return shortForLog(url);
  const [, cart, token, rest, query] = receiver as unknown as [string, string, string, string, string];
  return shortForLog(`/hooks/${cart}/${token.slice(0, SHOWN_TOKEN_CHARACTERS)}…${rest}${query ? '?…' : ''}`);
}

/**
 * Each request's "incoming request" log line: what Fastify's own serializer writes, with the URL
 * as urlForLog gives it and the Host cut to LOGGED_CHARS, so that a client sending huge ones
 * cannot flood the log.
 */
export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: urlForLog(request.url),
    host: shortForLog(request.host),
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
