import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine } from '../helpers/database.js';
import { png } from '../helpers/images.js';

/**
 * Serving an asset's bytes (docs/api.md, "Downloads and public delivery"): the
 * authenticated download `GET /api/v1/assets/<id>/content` and the keyless public URL. Both send
 * validators, conditional 304s, single byte ranges, nosniff and a sandbox for active types; the
 * public URL is cacheable, not rate limited, and reaches nothing but the account's own local assets.
 */

const JSON_TYPE = 'application/json; charset=utf-8';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';
const HTML = '<!doctype html><title>t</title><script>document.title = "ran"</script>';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>';
const XML = '<?xml version="1.0"?><feed><entry>1</entry></feed>';
const OTHER_SECRET = 'OTHER ACCOUNT SECRET BYTES';
const PUBLIC_CACHE = 'public, max-age=300, stale-while-revalidate=86400';

const PNG = png(4, 4);

type Fields = Record<string, string | { bytes: Buffer | string; filename: string }>;

function form(fields: Fields): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') data.append(name, value);
    else {
      const bytes = typeof value.bytes === 'string' ? Buffer.from(value.bytes) : value.bytes;
      data.append(name, new Blob([new Uint8Array(bytes)], { type: 'application/octet-stream' }), value.filename);
    }
  }
  return data;
}

interface Account {
  key: string;
  create(fields: Fields): Promise<number>;
  update(id: number, fields: Fields): Promise<void>;
  remove(id: number): Promise<void>;
  entry(id: number): Promise<Record<string, unknown>>;
  /** The path of the asset's public URL, as the API gives it. */
  publicPath(id: number): Promise<string>;
  content(id: number | string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

function account(ctx: TestContext, key: string): Account {
  const headers = { 'x-api-key': key };
  const self: Account = {
    key,
    async create(fields) {
      const response = await ctx.app.inject({ method: 'POST', url: '/api/v1/assets', headers, payload: form(fields) });
      assert.equal(response.statusCode, 200, response.body);
      return Number(response.json().id);
    },
    async update(id, fields) {
      const response = await ctx.app.inject({ method: 'PUT', url: `/api/v1/assets/${id}`, headers, payload: form(fields) });
      assert.equal(response.statusCode, 200, response.body);
    },
    async remove(id) {
      const response = await ctx.app.inject({ method: 'DELETE', url: `/api/v1/assets/${id}`, headers });
      assert.equal(response.statusCode, 200, response.body);
    },
    async entry(id) {
      const response = await ctx.app.inject({ url: `/api/v1/assets/${id}`, headers });
      assert.equal(response.statusCode, 200, response.body);
      return response.json();
    },
    async publicPath(id) {
      const url = (await self.entry(id)).public_url;
      assert.equal(typeof url, 'string', 'a local asset has a public_url');
      const parsed = new URL(url as string);
      assert.match(parsed.protocol, /^https?:$/, 'public_url is an absolute http(s) URL');
      return parsed.pathname;
    },
    content: (id, extra = {}) => ctx.app.inject({ url: `/api/v1/assets/${id}/content`, headers: { ...headers, ...extra } }),
  };
  return self;
}

const publicGet = (ctx: TestContext, path: string, headers: Record<string, string> = {}) => ctx.app.inject({ url: path, headers });

function assertNotFoundMessage(response: LightMyRequestResponse, status = 404): void {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], JSON_TYPE);
  assert.equal(typeof JSON.parse(response.body), 'string');
}

/** The headers every delivery of bytes carries, on both routes. */
function assertDeliveryHeaders(response: LightMyRequestResponse, expected: { type: RegExp; length: number }): void {
  assert.match(String(response.headers['content-type']), expected.type);
  assert.equal(response.headers['content-length'], String(expected.length));
  assert.match(String(response.headers.etag), /^"[^"]+"$/, 'a strong, quoted ETag');
  assert.ok(!Number.isNaN(Date.parse(String(response.headers['last-modified']))), 'Last-Modified is an HTTP date');
  assert.equal(response.headers['x-content-type-options'], 'nosniff');
  assert.equal(response.headers['accept-ranges'], 'bytes');
}

/** One byte range of ALPHABET (26 bytes), and what both routes must answer to it. */
const RANGES: { range: string; status: number; contentRange?: string; body?: string; why: string }[] = [
  { why: 'the first five bytes', range: 'bytes=0-4', status: 206, contentRange: 'bytes 0-4/26', body: 'abcde' },
  { why: 'one byte in the middle', range: 'bytes=12-12', status: 206, contentRange: 'bytes 12-12/26', body: 'm' },
  { why: 'an open-ended range', range: 'bytes=20-', status: 206, contentRange: 'bytes 20-25/26', body: 'uvwxyz' },
  { why: 'a suffix range', range: 'bytes=-3', status: 206, contentRange: 'bytes 23-25/26', body: 'xyz' },
  { why: 'a suffix longer than the bytes', range: 'bytes=-100', status: 206, contentRange: 'bytes 0-25/26', body: ALPHABET },
  { why: 'a range ending past the end, clamped', range: 'bytes=24-1000', status: 206, contentRange: 'bytes 24-25/26', body: 'yz' },
  { why: 'a range starting at the size', range: 'bytes=26-', status: 416, contentRange: 'bytes */26' },
  { why: 'a range wholly past the end', range: 'bytes=100-200', status: 416, contentRange: 'bytes */26' },
  { why: 'several ranges (the whole body)', range: 'bytes=0-1,5-6', status: 200, body: ALPHABET },
  { why: 'a malformed range (the whole body)', range: 'bytes=a-b', status: 200, body: ALPHABET },
  { why: 'a unit other than bytes (the whole body)', range: 'items=0-4', status: 200, body: ALPHABET },
];

function assertRangeAnswer(response: LightMyRequestResponse, expected: (typeof RANGES)[number]): void {
  assert.equal(response.statusCode, expected.status, `${expected.range}: ${response.body}`);
  if (expected.contentRange) assert.equal(response.headers['content-range'], expected.contentRange);
  else assert.equal(response.headers['content-range'], undefined);
  if (expected.body !== undefined) {
    assert.equal(response.body, expected.body);
    assert.equal(response.headers['content-length'], String(Buffer.byteLength(expected.body)));
  }
}

describeEachEngine('asset delivery', (engine) => {
  let ctx: TestContext;
  let owner: Account;
  let other: Account;
  const ids = { alphabet: 0, png: 0, html: 0, svg: 0, xml: 0, script: 0, remote: 0, twin: 0 };
  let otherId = 0;
  before(async () => {
    ctx = await startTestApp(engine);
    owner = account(ctx, (await accountWithKey(ctx.accounts, 'owner')).key);
    other = account(ctx, (await accountWithKey(ctx.accounts, 'other')).key);
    ids.alphabet = await owner.create({ name: 'alphabet.txt', content: ALPHABET });
    ids.png = await owner.create({ file: { bytes: PNG, filename: 'pixel.png' } });
    ids.html = await owner.create({ name: 'page.html', content: HTML });
    ids.svg = await owner.create({ file: { bytes: SVG, filename: 'badge.svg' } });
    ids.xml = await owner.create({ name: 'feed.xml', content: XML });
    ids.script = await owner.create({ name: 'app.js', content: 'console.log(1)' });
    ids.remote = await owner.create({ name: 'remote.png', url: 'https://cdn.example.com/remote.png?v=2' });
    ids.twin = await owner.create({ name: 'alphabet-copy.txt', content: ALPHABET });
    otherId = await other.create({ name: 'other.txt', content: OTHER_SECRET });
  });
  after(() => ctx.close());

  // --- the authenticated download -------------------------------------------------------------

  test('content of a local asset: 200 with its bytes, type, length, validators, nosniff and a private cache policy', async () => {
    const response = await owner.content(ids.alphabet);
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, ALPHABET);
    assertDeliveryHeaders(response, { type: /^text\/plain/, length: 26 });
    assert.equal(response.headers['cache-control'], 'private, no-cache');
  });

  test('content of an image is its exact bytes as image/png', async () => {
    const response = await owner.content(ids.png);
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.rawPayload, PNG);
    assertDeliveryHeaders(response, { type: /^image\/png$/, length: PNG.length });
  });

  test('the ETag comes from the bytes: equal bytes, equal tags; Last-Modified is the updated_at', async () => {
    const first = await owner.content(ids.alphabet);
    const twin = await owner.content(ids.twin);
    const png = await owner.content(ids.png);
    assert.equal(first.headers.etag, twin.headers.etag);
    assert.notEqual(first.headers.etag, png.headers.etag);
    const digest = createHash('sha256').update(ALPHABET).digest('hex');
    assert.ok(digest.startsWith(String(first.headers.etag).slice(1, -1)), 'the tag is (a prefix of) the SHA-256 of the bytes');
    const entry = await owner.entry(ids.alphabet);
    assert.equal(first.headers['last-modified'], new Date(entry.updated_at as string).toUTCString());
  });

  const conditionals: { why: string; headers: (etag: string, lastModified: string) => Record<string, string>; status: number }[] = [
    { why: 'If-None-Match with its ETag', headers: (etag) => ({ 'if-none-match': etag }), status: 304 },
    { why: 'If-None-Match listing its ETag among others', headers: (etag) => ({ 'if-none-match': `"nope", ${etag}` }), status: 304 },
    { why: 'If-None-Match: *', headers: () => ({ 'if-none-match': '*' }), status: 304 },
    { why: 'If-None-Match with the weak form of its ETag', headers: (etag) => ({ 'if-none-match': `W/${etag}` }), status: 304 },
    { why: 'If-None-Match with another ETag', headers: () => ({ 'if-none-match': '"0123456789abcdef"' }), status: 200 },
    { why: 'If-Modified-Since its Last-Modified', headers: (_etag, lastModified) => ({ 'if-modified-since': lastModified }), status: 304 },
    {
      why: 'If-Modified-Since an hour before its Last-Modified',
      headers: (_etag, lastModified) => ({ 'if-modified-since': new Date(Date.parse(lastModified) - 3_600_000).toUTCString() }),
      status: 200,
    },
    // RFC 9110 §13.1.3: an If-Modified-Since that is no HTTP-date is ignored.
    { why: 'If-Modified-Since that is no HTTP-date', headers: () => ({ 'if-modified-since': 'garbage 2099' }), status: 200 },
    {
      why: 'a non-matching If-None-Match, which overrides a matching If-Modified-Since',
      headers: (_etag, lastModified) => ({ 'if-none-match': '"other"', 'if-modified-since': lastModified }),
      status: 200,
    },
  ];

  for (const route of ['content', 'public'] as const) {
    const fetchAlphabet = async (headers: Record<string, string> = {}) =>
      route === 'content' ? owner.content(ids.alphabet, headers) : publicGet(ctx, await owner.publicPath(ids.alphabet), headers);

    for (const { why, headers, status } of conditionals) {
      test(`${route}: ${why} answers ${status}${status === 304 ? ' with no body and the validators' : ' with the bytes'}`, async () => {
        const plain = await fetchAlphabet();
        const response = await fetchAlphabet(headers(String(plain.headers.etag), String(plain.headers['last-modified'])));
        assert.equal(response.statusCode, status, response.body);
        if (status === 304) {
          assert.equal(response.body, '');
          assert.equal(response.headers.etag, plain.headers.etag);
        } else {
          assert.equal(response.body, ALPHABET);
        }
      });
    }

    for (const expected of RANGES) {
      test(`${route}: Range ${expected.range} (${expected.why}) answers ${expected.status}`, async () => {
        assertRangeAnswer(await fetchAlphabet({ range: expected.range }), expected);
      });
    }

    test(`${route}: If-Range with an outdated ETag sends the whole body, with the current one the range`, async () => {
      const current = String((await fetchAlphabet()).headers.etag);
      const stale = await fetchAlphabet({ range: 'bytes=0-4', 'if-range': '"outdated"' });
      assert.equal(stale.statusCode, 200);
      assert.equal(stale.body, ALPHABET);
      const fresh = await fetchAlphabet({ range: 'bytes=0-4', 'if-range': current });
      assert.equal(fresh.statusCode, 206);
      assert.equal(fresh.body, 'abcde');
    });

    test(`${route}: a range of a binary asset is exactly those bytes`, async () => {
      const response =
        route === 'content'
          ? await owner.content(ids.png, { range: 'bytes=8-23' })
          : await publicGet(ctx, await owner.publicPath(ids.png), { range: 'bytes=8-23' });
      assert.equal(response.statusCode, 206);
      assert.deepEqual(response.rawPayload, PNG.subarray(8, 24));
      assert.equal(response.headers['content-range'], `bytes 8-23/${PNG.length}`);
      assert.match(String(response.headers['content-type']), /^image\/png$/);
    });

    const sandboxed: [keyof typeof ids, boolean, RegExp][] = [
      ['html', true, /^text\/html/],
      ['svg', true, /^image\/svg\+xml/],
      ['xml', true, /xml/],
      ['alphabet', false, /^text\/plain/],
      ['script', false, /^text\/javascript/],
      ['png', false, /^image\/png$/],
    ];
    for (const [which, sandbox, type] of sandboxed) {
      test(`${route}: ${which} is served ${sandbox ? 'with' : 'without'} Content-Security-Policy: sandbox, and with nosniff`, async () => {
        const response = route === 'content' ? await owner.content(ids[which]) : await publicGet(ctx, await owner.publicPath(ids[which]));
        assert.equal(response.statusCode, 200);
        assert.match(String(response.headers['content-type']), type);
        assert.equal(response.headers['x-content-type-options'], 'nosniff');
        if (sandbox) assert.match(String(response.headers['content-security-policy']), /(^|;\s*)sandbox(\s|;|$)/);
        else assert.equal(response.headers['content-security-policy'], undefined);
      });
    }
  }

  test('content of a remote asset is a 302 to its url, with no bytes', async () => {
    const response = await owner.content(ids.remote);
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, 'https://cdn.example.com/remote.png?v=2');
    assert.equal(response.headers['content-range'], undefined);
  });

  test('content needs a key: 401 without one', async () => {
    const response = await ctx.app.inject({ url: `/api/v1/assets/${ids.alphabet}/content` });
    assertNotFoundMessage(response, 401);
    assert.ok(!response.body.includes(ALPHABET));
  });

  test("content of an unknown id, a malformed id or another account's id is a 404 with no bytes", async () => {
    for (const id of ['999999', 'abc', '0', '-1', '1.0', '%2e%2e', `${otherId}%00`, '..%2f..%2f1']) {
      const response = await owner.content(id);
      assertNotFoundMessage(response);
      assert.ok(!response.body.includes(OTHER_SECRET) && !response.body.includes(ALPHABET), id);
    }
    const theirs = await owner.content(otherId);
    assertNotFoundMessage(theirs);
    assert.ok(!theirs.body.includes(OTHER_SECRET));
    const remoteOfAnother = await other.content(ids.remote);
    assertNotFoundMessage(remoteOfAnother);
    assert.equal(remoteOfAnother.headers.location, undefined, "another account's remote url is not revealed");
  });

  // --- the public URL -------------------------------------------------------------------------

  test('the public URL needs no key: the bytes with a public cache policy, validators and nosniff', async () => {
    const path = await owner.publicPath(ids.alphabet);
    const response = await publicGet(ctx, path);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.body, ALPHABET);
    assertDeliveryHeaders(response, { type: /^text\/plain/, length: 26 });
    const cacheControl = String(response.headers['cache-control']);
    assert.match(cacheControl, /(^|,\s*)public(,|$)/);
    assert.ok(Number(/max-age=(\d+)/.exec(cacheControl)?.[1]) > 0, 'caches may keep it');
    assert.equal(cacheControl, PUBLIC_CACHE, 'as docs/api.md states');
    assert.equal(response.headers.etag, (await owner.content(ids.alphabet)).headers.etag, 'the same validator as the download');
  });

  test('the public URL is built from a handle and a public id, not from the name, folder, numeric id or key', async () => {
    const path = await owner.publicPath(ids.alphabet);
    const [, prefix, handle, publicId, ...rest] = path.split('/');
    assert.equal(prefix, 'public');
    assert.deepEqual(rest, []);
    assert.ok(handle && publicId);
    assert.ok(!path.includes('alphabet'));
    assert.notEqual(publicId, String(ids.alphabet));
    assert.ok(!owner.key.includes(handle!) && !owner.key.includes(publicId!), 'nothing secret is in it');
    assert.equal(handle, (await owner.publicPath(ids.png)).split('/')[2], "one handle for the account's assets");
    assert.notEqual(handle, (await other.publicPath(otherId)).split('/')[2], 'another account has another handle');
  });

  test('the public URL answers HEAD with the headers and no body', async () => {
    const response = await ctx.app.inject({ method: 'HEAD', url: await owner.publicPath(ids.png) });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-length'], String(PNG.length));
    assert.equal(response.body, '');
  });

  test('the public URL keeps working after a rename and a move, and serves new bytes with a new ETag after a replacement', async () => {
    const id = await owner.create({ name: 'stable.txt', content: 'version one', folder: 'published' });
    const path = await owner.publicPath(id);
    const first = await publicGet(ctx, path);
    assert.equal(first.body, 'version one');

    await owner.update(id, { name: 'renamed.txt' });
    assert.equal(await owner.publicPath(id), path, 'the rename keeps the URL');
    assert.equal((await publicGet(ctx, path)).body, 'version one');
    await owner.update(id, { folder: '' });
    assert.equal(await owner.publicPath(id), path, 'the move keeps the URL');
    assert.equal((await publicGet(ctx, path)).body, 'version one');
    assert.equal((await publicGet(ctx, path, { 'if-none-match': String(first.headers.etag) })).statusCode, 304, 'nothing changed for caches');

    await owner.update(id, { content: 'version two' });
    assert.equal(await owner.publicPath(id), path, 'a replacement keeps the URL');
    const revalidated = await publicGet(ctx, path, { 'if-none-match': String(first.headers.etag) });
    assert.equal(revalidated.statusCode, 200, 'a cache revalidating its old copy gets the new bytes');
    assert.equal(revalidated.body, 'version two');
    assert.notEqual(revalidated.headers.etag, first.headers.etag);
  });

  test('a remote asset has no public URL, and an asset made remote or deleted is no longer served publicly', async () => {
    assert.equal((await owner.entry(ids.remote)).public_url, null);
    const madeRemote = await owner.create({ name: 'soon-remote.txt', content: 'local for now' });
    const remotePath = await owner.publicPath(madeRemote);
    assert.equal((await publicGet(ctx, remotePath)).statusCode, 200);
    await owner.update(madeRemote, { url: 'https://example.com/elsewhere.txt' });
    const afterRemote = await publicGet(ctx, remotePath);
    assertNotFoundMessage(afterRemote);
    assert.equal(afterRemote.headers.location, undefined);

    const deleted = await owner.create({ name: 'soon-gone.txt', content: 'here for now' });
    const deletedPath = await owner.publicPath(deleted);
    await owner.remove(deleted);
    const afterDelete = await publicGet(ctx, deletedPath);
    assertNotFoundMessage(afterDelete);
    assert.ok(!afterDelete.body.includes('here for now'));
  });

  test("the public URL ignores any key: another account's key does not change what it serves", async () => {
    const path = await owner.publicPath(ids.alphabet);
    const response = await publicGet(ctx, path, { 'x-api-key': other.key });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, ALPHABET);
  });

  /** Paths that try to reach past, around or beside the public URL of the owner's alphabet.txt. */
  async function traversalAttempts(): Promise<string[]> {
    const [, , handle, publicId] = (await owner.publicPath(ids.alphabet)).split('/') as [string, string, string, string];
    const [, , otherHandle, otherPublicId] = (await other.publicPath(otherId)).split('/') as [string, string, string, string];
    const blob = await ctx.database.db.selectFrom('assets').select(['account_id', 'blob_key']).where('id', '=', otherId).executeTakeFirstOrThrow();
    const [blobAccount, blobName] = blob.blob_key!.split('/') as [string, string];
    const attempts = [
      `/public/${otherHandle}/${publicId}`, // another account's handle with this account's public id
      `/public/${handle}/${otherPublicId}`, // this account's handle with another account's public id
      `/public/${handle}/..`,
      `/public/${handle}/../${otherHandle}/${publicId}`, // dot segments cannot pair this account's id with another handle
      `/public/${otherHandle}/${otherPublicId}/../${publicId}`,
      `/public/${handle}/${publicId}/../${otherPublicId}`,
      `/public/${handle}/%2e%2e`,
      `/public/${handle}/%2E%2E/${otherHandle}/${publicId}`,
      `/public/${otherHandle}/%2e%2e/${handle}/${otherPublicId}`,
      `/public/${handle}/%2e%2e%2f${otherHandle}%2f${otherPublicId}`,
      `/public/${handle}/%2e%2e%2f%2e%2e%2fblobs%2f${blobAccount}%2f${blobName}`,
      `/public/${handle}/..%2f..%2f..%2fetc%2fpasswd`,
      `/public/${handle}/..%5c..%5c${publicId}`,
      `/public/${handle}/%252e%252e%252f${publicId}`,
      `/public/%2e%2e/${handle}/${publicId}`,
      `/public/${handle}%2f${publicId}`,
      `/public/${handle}/${publicId}%2f`,
      `/public/${handle}/${publicId}%2f..`,
      `/public/${handle}/${publicId}%00`,
      `/public/${handle}/%00${publicId}`,
      `/public/${handle}%00/${publicId}`,
      `/public/${handle}/${publicId}%00.png`,
      `/public/${handle}/${publicId}%20`,
      `/public/${handle}/${publicId};x=1`,
      `/public/${handle}/${publicId}.txt`,
      `/public/${handle}/${publicId}/extra`,
      `/public/${handle}/${publicId.slice(0, -1)}`,
      `/public/${handle}/${publicId}0`,
      `/public/${handle}/${publicId.toUpperCase()}`,
      `/public/${handle.toUpperCase()}/${publicId}`,
      `/public/${handle}/${ids.alphabet}`,
      `/public/${handle}/alphabet.txt`,
      `/public/${blobAccount}/${blobName}`,
      `/public/${handle}/${blobName}`,
      `/public/${handle}/%zz`,
      `/public/${handle}`,
      `/public/${handle}/`,
      `/public//${publicId}`,
      `/public/`,
      `/public/default/${publicId}`,
      `/public/${handle}/${publicId}%`,
      `/public/%e0%a4%a/${publicId}`,
      `/public/${handle}/${'a'.repeat(5000)}`,
      `/public/${'f'.repeat(5000)}/${publicId}`,
      `/public/${handle}/${publicId}${'%2f'.repeat(2000)}`,
    ];
    return attempts;
  }

  test('traversal, malformed and over-long public paths are 404s and never serve the bytes of anything', async () => {
    const everyKnownBody = [ALPHABET, HTML, SVG, XML, OTHER_SECRET, 'console.log(1)'];
    for (const attempt of await traversalAttempts()) {
      const response = await publicGet(ctx, attempt);
      assert.equal(response.statusCode, 404, `${attempt.slice(0, 100)} answered ${response.statusCode}: ${response.body.slice(0, 100)}`);
      for (const known of everyKnownBody) assert.ok(!response.body.includes(known), `${attempt} leaked bytes`);
      assert.ok(!response.rawPayload.includes(PNG.subarray(0, 8)), `${attempt} leaked image bytes`);
      assert.equal(response.headers.etag, undefined, attempt);
      assert.equal(response.headers['content-range'], undefined, attempt);
    }
  });

  test('every refused public path answers as every error does: a JSON string, JSON with charset, an X-Request-Id', async () => {
    const wrong: string[] = [];
    for (const attempt of await traversalAttempts()) {
      const response = await publicGet(ctx, attempt);
      const problems = [];
      if (response.headers['content-type'] !== JSON_TYPE) problems.push(`content-type ${response.headers['content-type']}`);
      if (!response.headers['x-request-id']) problems.push('no X-Request-Id');
      try {
        if (typeof JSON.parse(response.body) !== 'string') problems.push(`body ${response.body.slice(0, 80)}`);
      } catch {
        problems.push(`body is not JSON: ${response.body.slice(0, 80)}`);
      }
      if (problems.length > 0) wrong.push(`${attempt} (${response.statusCode}): ${problems.join('; ')}`);
    }
    assert.deepEqual(wrong, []);
  });

  // --- bytes replaced or deleted while a download looks them up -----------------------------

  /** Runs `meanwhile` once, as the next read of the blob store begins: after the download has read its row. */
  function beforeNextRead(meanwhile: () => Promise<void>): void {
    const read = ctx.blobs.read;
    ctx.blobs.read = async (key, range) => {
      ctx.blobs.read = read;
      await meanwhile();
      return read.call(ctx.blobs, key, range);
    };
  }

  for (const route of ['content', 'public'] as const) {
    const pathOf = async (id: number) => (route === 'content' ? `/api/v1/assets/${id}/content` : await owner.publicPath(id));
    const download = (path: string) => ctx.app.inject({ url: path, headers: { 'x-api-key': owner.key } });

    test(`${route}: bytes replaced between the lookup and the read are served as they are now`, async () => {
      const id = await owner.create({ name: `replaced-${route}.txt`, content: 'before' });
      const path = await pathOf(id);
      beforeNextRead(() => owner.update(id, { content: 'after the replacement' }));
      const response = await download(path);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.body, 'after the replacement');
      assert.equal(response.headers['content-length'], String('after the replacement'.length));
      assert.equal(response.headers.etag, (await download(path)).headers.etag, 'the validators are the new bytes');
    });

    test(`${route}: an asset deleted between the lookup and the read is not found`, async () => {
      const id = await owner.create({ name: `deleted-${route}.txt`, content: 'soon gone' });
      const path = await pathOf(id);
      beforeNextRead(() => owner.remove(id));
      assertNotFoundMessage(await download(path));
    });
  }
});

describeEachEngine('public delivery and the rate limits', (engine) => {
  const PUBLIC_LIMIT = 5;
  let ctx: TestContext;
  let owner: Account;
  let unlimited: TestContext;
  let unlimitedOwner: Account;
  before(async () => {
    ctx = await startTestApp(engine, { rateLimit: { max: 2, windowMs: 60_000 }, publicRateLimit: { max: PUBLIC_LIMIT, windowMs: 60_000 } });
    owner = account(ctx, (await accountWithKey(ctx.accounts, 'limited')).key);
    unlimited = await startTestApp(engine, { publicRateLimit: { max: 0, windowMs: 60_000 } });
    unlimitedOwner = account(unlimited, (await accountWithKey(unlimited.accounts, 'unlimited')).key);
  });
  after(async () => {
    await ctx?.close();
    await unlimited?.close();
  });

  const fetchFrom = (remoteAddress: string, path: string, headers: Record<string, string> = {}) => ctx.app.inject({ url: path, remoteAddress, headers });
  let nextApiAddress = 1;
  /** A new local asset's public path, made through the API from an address of its own (the API allows 2 a window). */
  async function publicAsset(name: string): Promise<string> {
    const remoteAddress = `192.0.2.${nextApiAddress++}`;
    const headers = { 'x-api-key': owner.key };
    const created = await ctx.app.inject({ method: 'POST', url: '/api/v1/assets', remoteAddress, headers, payload: form({ name, content: name }) });
    assert.equal(created.statusCode, 200, created.body);
    const entry = await ctx.app.inject({ url: `/api/v1/assets/${created.json().id}`, remoteAddress, headers });
    assert.equal(entry.statusCode, 200, entry.body);
    return new URL(entry.json().public_url).pathname;
  }

  test('public URLs are not counted in the API limit: with a limit of 2, public fetches succeed while the API answers 429', async () => {
    const id = await owner.create({ name: 'popular.txt', content: 'everyone wants this' }); // API request 1
    const path = await owner.publicPath(id); // API request 2
    for (let i = 0; i < PUBLIC_LIMIT - 1; i++) {
      const response = await publicGet(ctx, path);
      assert.equal(response.statusCode, 200, `public fetch ${i + 1}: ${response.statusCode}`);
      assert.equal(response.body, 'everyone wants this');
    }
    const api = await owner.content(id);
    assert.equal(api.statusCode, 429, 'the limit is on for the API');
    assert.equal(api.body, '');
    assert.equal((await publicGet(ctx, path, { range: 'bytes=0-7' })).statusCode, 206, 'still served after the API is limited');
  });

  test(`each address gets ${PUBLIC_LIMIT} public requests a window, 404s and 304s included; then a 429 as the API answers it`, async () => {
    const path = await publicAsset('counted.txt');
    const client = '203.0.113.40';
    const first = await fetchFrom(client, path);
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['x-ratelimit-remaining'], undefined, 'an answer that caches keep carries no count of one client');
    assert.equal((await fetchFrom(client, path, { 'if-none-match': String(first.headers.etag) })).statusCode, 304);
    assert.equal((await fetchFrom(client, `/public/${'0'.repeat(16)}/${'0'.repeat(24)}`)).statusCode, 404);
    assert.equal((await fetchFrom(client, `/public/${'x'.repeat(5000)}/y`)).statusCode, 404);
    assert.equal((await fetchFrom(client, path)).statusCode, 200);

    const refused = await fetchFrom(client, path);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.body, '', 'a 429 has an empty body');
    assert.match(String(refused.headers['retry-after']), /^\d+$/);
    assert.equal(refused.headers['x-ratelimit-limit'], String(PUBLIC_LIMIT));
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
    assert.ok(refused.headers['x-request-id']);

    const neighbour = await fetchFrom('203.0.113.41', path);
    assert.equal(neighbour.statusCode, 200, 'another address has its own budget');
    assert.equal(neighbour.body, 'counted.txt');
  });

  test('the public ceiling has counters of its own: an address refused there still reaches the API, and the other way round', async () => {
    const path = await publicAsset('apart.txt');
    const client = '203.0.113.50';
    for (let i = 0; i < PUBLIC_LIMIT; i++) assert.equal((await fetchFrom(client, path)).statusCode, 200);
    assert.equal((await fetchFrom(client, path)).statusCode, 429);
    const api = await ctx.app.inject({ url: '/api/v1/assets', remoteAddress: client, headers: { 'x-api-key': owner.key } });
    assert.equal(api.statusCode, 200, 'the API budget of the address is untouched');
    assert.equal(api.headers['x-ratelimit-remaining'], '1');

    const apiClient = '203.0.113.51';
    for (let i = 0; i < 2; i++) await ctx.app.inject({ url: '/api/v1/assets', remoteAddress: apiClient, headers: { 'x-api-key': owner.key } });
    assert.equal((await ctx.app.inject({ url: '/api/v1/assets', remoteAddress: apiClient, headers: { 'x-api-key': owner.key } })).statusCode, 429);
    assert.equal((await fetchFrom(apiClient, path)).statusCode, 200, 'an address refused by the API still gets public bytes');
  });

  test('IPv6 addresses in one /64 share a public budget; the next /64 has its own', async () => {
    const path = await publicAsset('six.txt');
    for (let i = 1; i <= PUBLIC_LIMIT; i++) assert.equal((await fetchFrom(`2001:db8:40:1::${i.toString(16)}`, path)).statusCode, 200);
    assert.equal((await fetchFrom('2001:db8:40:1:ffff:ffff:ffff:ffff', path)).statusCode, 429, 'another address of the same /64');
    assert.equal((await fetchFrom('2001:db8:40:2::1', path)).statusCode, 200, 'the next /64');
  });

  test('PUBLIC_RATE_LIMIT_PER_MINUTE=0 turns the public ceiling off', async () => {
    const path = await unlimitedOwner.publicPath(await unlimitedOwner.create({ name: 'free.txt', content: 'free' }));
    for (let i = 0; i < 100; i++) {
      const response = await unlimited.app.inject({ url: path, remoteAddress: '203.0.113.60' });
      assert.equal(response.statusCode, 200, `fetch ${i + 1}`);
    }
  });
});
