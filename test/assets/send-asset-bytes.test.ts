import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AssetRow } from '../../src/assets/repository.js';
import { notFound } from '../../src/errors.js';
import { sendAssetBytes } from '../../src/assets/routes.js';
import type { BlobStore } from '../../src/storage/blob-store.js';

/**
 * Serving an asset's bytes answers once and logs nothing but real failures: every answer, 304 and
 * 416 included, ends the handler as sent; bytes replaced since the lookup are looked up again.
 */
const BYTES: Record<string, string> = { 'k/current': 'current bytes', 'k/empty': '' };
const blobs = {
  read: async (key: string, range?: { start: number; end: number }) => {
    const bytes = BYTES[key];
    if (bytes === undefined) return undefined;
    return Readable.from([Buffer.from(range ? bytes.slice(range.start, range.end + 1) : bytes)]);
  },
} as unknown as BlobStore;
const row = (key: string): AssetRow =>
  ({ id: 1, blob_key: key, size: BYTES[key]?.length ?? 7, content_type: 'text/plain', etag: `etag-${key}`, updated_at: 1_767_225_600, url: null }) as AssetRow;

let app: FastifyInstance;
const logged: string[] = [];
// What each request's lookups find, in turn.
let found: string[] = [];

before(async () => {
  app = Fastify({ logger: { level: 'error', stream: { write: (line: string) => logged.push(line) } } });
  app.get('/bytes', (request, reply) =>
    sendAssetBytes(
      request,
      reply,
      blobs,
      async () => {
        const key = found.shift() ?? 'k/current';
        if (key === 'deleted') throw notFound('there is no asset with id 1');
        return row(key);
      },
      'no-cache',
    ),
  );
  await app.ready();
});
after(() => app.close());

const cases: { why: string; lookups: string[]; headers?: Record<string, string>; method?: 'GET' | 'HEAD'; status: number; body?: string }[] = [
  { why: 'the bytes', lookups: ['k/current'], status: 200, body: 'current bytes' },
  { why: 'a range', lookups: ['k/current'], headers: { range: 'bytes=0-6' }, status: 206, body: 'current' },
  { why: 'a range outside the bytes', lookups: ['k/current'], headers: { range: 'bytes=100-200' }, status: 416 },
  { why: 'bytes the client holds', lookups: ['k/current'], headers: { 'if-none-match': '"etag-k/current"' }, status: 304 },
  { why: 'a HEAD', lookups: ['k/current'], method: 'HEAD', status: 200 },
  { why: 'no bytes at all', lookups: ['k/empty'], status: 200, body: '' },
  { why: 'bytes replaced since the lookup: the new ones', lookups: ['k/replaced', 'k/current'], status: 200, body: 'current bytes' },
];
for (const { why, lookups, headers, method, status, body } of cases) {
  test(`${why}: ${status}, and nothing logged`, async () => {
    found = [...lookups];
    logged.length = 0;
    const response = await app.inject({ method: method ?? 'GET', url: '/bytes', headers });
    assert.equal(response.statusCode, status, response.body);
    if (body !== undefined) assert.equal(response.body, body);
    assert.deepEqual(found, [], 'every lookup made, and no more');
    assert.deepEqual(logged, []);
  });
}

test('bytes missing under a key the asset still names are a 500, logged', async () => {
  found = ['k/lost', 'k/lost'];
  logged.length = 0;
  assert.equal((await app.inject({ url: '/bytes' })).statusCode, 500);
  assert.equal(logged.length, 1);
  assert.match(logged[0]!, /no bytes under k\/lost/);
});

test("bytes replaced since the lookup are answered with the new bytes' headers only; an asset deleted meanwhile, with none of its own", async () => {
  found = ['k/replaced', 'k/current'];
  const replaced = await app.inject({ url: '/bytes', headers: { range: 'bytes=0-4', 'if-range': '"etag-k/replaced"' } });
  assert.equal(replaced.statusCode, 200, 'If-Range names the old bytes: the whole of the new ones');
  assert.equal(replaced.headers.etag, '"etag-k/current"');
  assert.equal(replaced.headers['content-range'], undefined);
  assert.equal(replaced.body, 'current bytes');
  found = ['k/replaced', 'deleted'];
  const deleted = await app.inject({ url: '/bytes' });
  assert.equal(deleted.statusCode, 404);
  for (const header of ['etag', 'cache-control', 'last-modified', 'content-range']) assert.equal(deleted.headers[header], undefined, header);
});
