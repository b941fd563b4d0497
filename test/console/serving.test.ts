import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import Fastify from 'fastify';
import { consoleRoutes } from '../../src/console/routes.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { tempDir } from '../helpers/database.js';

/**
 * How the console's files are served: files named by their content's hash kept by browsers for
 * a year, the page revalidated every time and sent with its Content-Security-Policy, gzipped
 * when asked; and, before `npm run build`, a 404 that says to run it. A folder made here stands
 * for console/dist.
 */

const built = tempDir('acds-console-');
fs.mkdirSync(path.join(built, 'assets'));
fs.writeFileSync(path.join(built, 'index.html'), '<!doctype html><title>acds console</title><script type="module" src="./assets/index-abc123.js"></script>');
fs.writeFileSync(path.join(built, 'assets', 'index-abc123.js'), `console.log(${JSON.stringify('x'.repeat(4096))});`);
// A file beside the console's folder, which no path under /console/ may reach.
const outside = `${built}-outside.txt`;
fs.writeFileSync(outside, 'not the console');
after(() => {
  fs.rmSync(built, { recursive: true, force: true });
  fs.rmSync(outside, { force: true });
});

async function consoleApp(root: string) {
  const app = Fastify();
  app.setErrorHandler(errorHandler);
  await app.register(consoleRoutes, { root });
  return app;
}

test('the page is revalidated each time and carries its policy; hashed files are kept a year and gzipped', async () => {
  const app = await consoleApp(built);
  const moved = await app.inject({ url: '/console' });
  assert.equal(moved.statusCode, 301);
  assert.equal(moved.headers.location, '/console/');
  const page = await app.inject({ url: '/console/' });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.equal(page.headers['cache-control'], 'no-cache');
  assert.match(String(page.headers['content-security-policy']), /default-src 'self'; connect-src 'self'/);
  assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
  const script = await app.inject({ url: '/console/assets/index-abc123.js', headers: { 'accept-encoding': 'gzip' } });
  assert.equal(script.statusCode, 200);
  assert.equal(script.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.equal(script.headers['content-encoding'], 'gzip');
  assert.equal(script.headers['content-security-policy'], undefined);
  for (const url of [`/console/../${path.basename(outside)}`, `/console/%2e%2e/${path.basename(outside)}`, `/console/..%2f${path.basename(outside)}`]) {
    const escaped = await app.inject({ url });
    assert.equal(escaped.statusCode, 404, url);
    assert.ok(!escaped.body.includes('not the console'), url);
  }
  await app.close();
});

test('before the console is built, its pages answer 404 saying to build it', async () => {
  const app = await consoleApp(path.join(built, 'missing'));
  const answer = await app.inject({ url: '/console/' });
  assert.equal(answer.statusCode, 404);
  assert.equal(answer.json(), 'the console is not built: run npm run build');
  await app.close();
});
