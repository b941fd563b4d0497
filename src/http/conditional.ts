import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Whether an If-None-Match header names `etag`, or is `*`. The comparison is weak, as
 * RFC 9110 §13.1.2 asks for If-None-Match: W/"x" and "x" name the same representation.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}

/**
 * Tags a list response and tells whether the client holds it already (answer 304 then). A list
 * is revalidated on every use (no-cache) and is the key holder's alone (private).
 */
export function listNotModified(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  reply.header('etag', etag).header('cache-control', 'private, no-cache');
  return ifNoneMatchHits(request.headers['if-none-match'], etag);
}
