import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import rangeParser from 'range-parser';
import { needsSandbox } from '../assets/rules.js';
import type { BlobStore } from '../storage/blob-store.js';
import { ifNoneMatchHits, parseHttpDate } from './conditional.js';

export interface StoredBytes {
  blobKey: string;
  size: number;
  contentType: string;
  /** Strong validator of the bytes, without quotes. */
  etag: string;
  modifiedAt: Date;
}

/**
 * Serves stored bytes the way browsers and caches expect: validators, conditional 304s, one
 * byte range (206, or 416 when it lies outside), `nosniff`, and a sandbox for types that could
 * run script when opened directly. Resolves to whether it answered: nothing is sent when the
 * store has no bytes under the key (replaced or deleted since the row naming them was read). A
 * boolean, not the reply: an async function that returns the reply (a thenable) resolves to what
 * its `then` gives, undefined, once the answer has gone.
 */
export async function sendBytes(request: FastifyRequest, reply: FastifyReply, blobs: BlobStore, bytes: StoredBytes, cacheControl: string): Promise<boolean> {
  const etag = `"${bytes.etag}"`;
  const lastModified = new Date(Math.floor(bytes.modifiedAt.getTime() / 1000) * 1000);
  const unchanged = notModified(request, etag, lastModified);
  const range = unchanged ? undefined : singleRange(request, bytes.size, etag, lastModified);
  // Read before any header is set: bytes gone leave the reply untouched, to be answered otherwise.
  const reads = !unchanged && range !== 'unsatisfiable' && request.method !== 'HEAD' && bytes.size > 0;
  const stream = reads ? await blobs.read(bytes.blobKey, range ?? undefined) : undefined;
  if (reads && !stream) return false;

  reply
    .header('etag', etag)
    .header('last-modified', lastModified.toUTCString())
    .header('cache-control', cacheControl)
    .header('accept-ranges', 'bytes')
    .header('x-content-type-options', 'nosniff');
  if (needsSandbox(bytes.contentType)) reply.header('content-security-policy', 'sandbox');
  if (unchanged) {
    reply.code(304).send();
    return true;
  }
  if (range === 'unsatisfiable') {
    reply.code(416).header('content-range', `bytes */${bytes.size}`).send();
    return true;
  }
  reply.type(bytes.contentType);
  if (range) {
    reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${bytes.size}`)
      .header('content-length', range.end - range.start + 1);
  } else {
    reply.code(200).header('content-length', bytes.size);
  }
  // Fastify's HEAD routes keep the Content-Length set above only when the payload is a stream.
  reply.send(request.method === 'HEAD' ? Readable.from([]) : stream);
  return true;
}

function notModified(request: FastifyRequest, etag: string, lastModified: Date): boolean {
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch !== undefined) return ifNoneMatchHits(ifNoneMatch, etag);
  const since = request.headers['if-modified-since'];
  const sinceTime = since === undefined ? undefined : parseHttpDate(since);
  return sinceTime !== undefined && lastModified.getTime() <= sinceTime;
}

/** The one range asked for, undefined to send everything (no, malformed or several ranges). */
function singleRange(request: FastifyRequest, size: number, etag: string, lastModified: Date) {
  const header = request.headers.range;
  if (!header) return undefined;
  // If-Range: serve the range only if the client's copy is still the current one.
  const ifRange = request.headers['if-range'];
  if (ifRange !== undefined && ifRange !== etag && ifRange !== lastModified.toUTCString()) return undefined;
  // A suffix longer than the bytes means all of them (RFC 9110 §14.1.2); range-parser refuses it.
  const suffix = /^bytes=-(\d+)$/.exec(header.trim());
  if (suffix && size > 0 && Number(suffix[1]) >= size) return { start: 0, end: size - 1 };
  const ranges = rangeParser(size, header, { combine: true });
  if (ranges === -1) return 'unsatisfiable' as const;
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return ranges[0]!;
}
