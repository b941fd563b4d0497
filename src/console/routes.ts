import { existsSync } from 'node:fs';
import path from 'node:path';
import compress from '@fastify/compress';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';

/** Where `npm run build` puts the console (console/vite.config.ts), from src/console or dist/console alike. */
export const CONSOLE_DIR = path.resolve(import.meta.dirname, '../../console/dist');

/**
 * The page may call its own service and show images from wherever public URLs point (a CDN's
 * PUBLIC_URL); nothing else. Inline styles are uPlot's and the grid's.
 */
const CONSOLE_POLICY = [
  "default-src 'self'",
  "connect-src 'self'",
  'img-src * data: blob:',
  "style-src 'self' 'unsafe-inline'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/**
 * The web console at /console/: the files Vite built, served as they are. Files named by their
 * content's hash are kept by browsers for a year; the page itself is revalidated every time, so
 * that a new build shows at once. The page calls the API as any client does, under its limit.
 */
export async function consoleRoutes(app: FastifyInstance, { root = CONSOLE_DIR }: { root?: string } = {}) {
  if (!existsSync(path.join(root, 'index.html'))) {
    app.get('/console/*', { schema: { hide: true } }, async () => {
      throw notFound('the console is not built: run npm run build');
    });
    return;
  }
  await app.register(compress, { encodings: ['gzip'], threshold: 1024 });
  await app.register(fastifyStatic, {
    root,
    prefix: '/console',
    redirect: true,
    decorateReply: false,
    schemaHide: true,
    cacheControl: false,
    setHeaders: (response, file) => {
      const hashed = file.startsWith(path.join(root, 'assets') + path.sep);
      response.setHeader('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      response.setHeader('x-content-type-options', 'nosniff');
      if (file.endsWith('.html')) {
        response.setHeader('content-security-policy', CONSOLE_POLICY);
        response.setHeader('referrer-policy', 'no-referrer');
      }
    },
  });
}
