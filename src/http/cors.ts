import type { FastifyCorsOptions } from '@fastify/cors';

/**
 * Which browsers' pages may read the service's answers from another origin. The API is called
 * with a key in a header, never a cookie, so it shares no credentials: what CORS guards here is
 * only which pages may use a key they hold.
 */

/** Headers of API answers that a page on another origin may read, past the ones browsers always show. */
const API_EXPOSED_HEADERS = [
  'X-Request-Id',
  'Link',
  'ETag',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Content-Disposition',
  'Content-Range',
  'Accept-Ranges',
];

/** How long a browser may keep a preflight's answer before asking again, in seconds. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * The API: the origins an operator lists in CORS_ORIGINS (`*` for any), every method it answers.
 * A browser's preflight carries Origin and Access-Control-Request-Method, and is answered before
 * the rate limit and the key. An OPTIONS without them is no preflight: it goes through the API as
 * any request does (counted, its key checked, then not found), where @fastify/cors would answer
 * it with a plain-text 400, counted nowhere.
 */
export function apiCors(origins: string[]): FastifyCorsOptions {
  const options: FastifyCorsOptions = {
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ['X-API-Key', 'Content-Type', 'X-Request-Id', 'If-None-Match', 'If-Modified-Since', 'Range', 'If-Range'],
    exposedHeaders: API_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
  };
  const notPreflight = { ...options, preflight: false };
  return {
    delegator: (request, callback) => callback(null, request.headers.origin && request.headers['access-control-request-method'] ? options : notPreflight),
  };
}

/**
 * Public asset URLs, readable from any origin: a page's script may fetch a stored text, a font
 * or a JSON file, or draw an image on a canvas, wherever the page is served from.
 */
export const PUBLIC_CORS: FastifyCorsOptions = {
  origin: '*',
  methods: ['GET', 'HEAD'],
  allowedHeaders: ['Range', 'If-None-Match', 'If-Modified-Since', 'If-Range'],
  exposedHeaders: ['ETag', 'Content-Range', 'Accept-Ranges'],
  maxAge: PREFLIGHT_MAX_AGE_S,
};
