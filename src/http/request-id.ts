import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

// What a request id a client sends may be: a proxy's or a tracer's token (a UUID, a hex trace
// id, "req_4f2a.1"), never text that could forge a log line or a header.
const SENT_ID = /^[A-Za-z0-9][A-Za-z0-9._:+/=@-]{0,127}$/;

/**
 * The id a request is known by in the log and in its answer's X-Request-Id: the one the client
 * (or a proxy before the service) sent, when it looks like an id, so that a request can be
 * followed across services; else a new UUID.
 */
export function requestIdOf(headers: IncomingHttpHeaders): string {
  const sent = headers['x-request-id'];
  return typeof sent === 'string' && SENT_ID.test(sent) ? sent : randomUUID();
}
