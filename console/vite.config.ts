import path from 'node:path';
import { defineConfig } from 'vite';

/**
 * The console, built into console/dist, which the service serves at /console/. Paths in the
 * page are relative, so that it works under whatever prefix a proxy puts the service at. The
 * client is bundled from its sources.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', reportCompressedSize: false },
  resolve: { alias: { '@acds/client': path.join(import.meta.dirname, '../client/src/index.ts') } },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // `npm run console:dev`: the page from Vite, the API from the service started by `npm start`.
  server: {
    proxy: Object.fromEntries(['/api', '/public', '/openapi.json'].map((path) => [path, process.env.ACDS_URL ?? 'http://127.0.0.1:3000'])),
  },
});
