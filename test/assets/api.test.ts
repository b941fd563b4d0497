import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { LightMyRequestResponse } from 'fastify';
import { FORM_OVERHEAD_BYTES } from '../../src/assets/form.js';
import type { Config } from '../../src/config.js';
import { S3BlobStore } from '../../src/storage/s3-blob-store.js';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine } from '../helpers/database.js';
import { variedText } from '../helpers/fixtures.js';
import { png } from '../helpers/images.js';
import { holdWrites } from '../helpers/write-locks.js';

/**
 * The asset API over multipart forms: listing, filters, create, read, update and delete, as
 * docs/api.md ("Listing", "Filters", "Assets", "Errors") has them. Every refusal is a 400
 * with a JSON string body that leaves nothing behind: no row, no bytes, no journal entry.
 */

const JSON_TYPE = 'application/json; charset=utf-8';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const ENTRY_FIELDS = [
  'id',
  'created_at',
  'updated_at',
  'name',
  'folder',
  'image',
  'video',
  'script',
  'style',
  'text',
  'width',
  'height',
  'url',
  'async',
  'defer',
];
const FLAGS = ['image', 'video', 'script', 'style', 'text'] as const;
type Flag = (typeof FLAGS)[number];

// ---------------------------------------------------------------------------------------------
// Fixtures, built here

/** A real baseline JPEG from the seed files, 320 x 180 pixels (its SOF0 segment says so; checked below). */
const JPEG = fs.readFileSync(path.resolve(import.meta.dirname, '../../seed/hero.jpg'));

/** Width and height from a JPEG's first SOF marker, to prove the fixture is what the test says it is. */
function jpegSize(bytes: Buffer): { width: number; height: number } {
  let offset = 2;
  while (offset < bytes.length) {
    const marker = bytes[offset + 1]!;
    const length = bytes.readUInt16BE(offset + 2);
    if (marker >= 0xc0 && marker <= 0xc3) return { height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
    offset += 2 + length;
  }
  throw new Error('no SOF marker');
}

interface FilePart {
  bytes: Buffer | string;
  filename: string;
  type?: string;
}
type Fields = Record<string, string | FilePart>;

/** A multipart form as light-my-request 6.6 sends a global FormData: text fields and at most one file per key. */
function form(fields: Fields): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) appendPart(data, name, value);
  return data;
}

function appendPart(data: FormData, name: string, value: string | FilePart): void {
  if (typeof value === 'string') data.append(name, value);
  else {
    const bytes = typeof value.bytes === 'string' ? Buffer.from(value.bytes) : value.bytes;
    data.append(name, new Blob([new Uint8Array(bytes)], { type: value.type ?? 'application/octet-stream' }), value.filename);
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Client {
  create(fields: Fields | FormData): Promise<LightMyRequestResponse>;
  /** Creates and returns the new id; fails the test on anything but 200. */
  created(fields: Fields): Promise<number>;
  update(id: number | string, fields: Fields | FormData): Promise<LightMyRequestResponse>;
  remove(id: number | string): Promise<LightMyRequestResponse>;
  get(url: string, extraHeaders?: Record<string, string>): Promise<LightMyRequestResponse>;
  entry(id: number): Promise<Record<string, unknown>>;
  list(query?: string): Promise<{ entries: Record<string, unknown>[]; totalEntries: number; page: number; totalPages: number }>;
}

function client(ctx: TestContext, key: string): Client {
  const headers = { 'x-api-key': key };
  const body = (fields: Fields | FormData) => (fields instanceof FormData ? fields : form(fields));
  const self: Client = {
    create: (fields) => ctx.app.inject({ method: 'POST', url: '/api/v1/assets', headers, payload: body(fields) }),
    async created(fields) {
      const response = await self.create(fields);
      assert.equal(response.statusCode, 200, response.body);
      const answer = response.json() as { id: unknown };
      assert.equal(typeof answer.id, 'string', 'the new id is given as a string');
      assert.match(answer.id as string, /^\d+$/);
      return Number(answer.id);
    },
    update: (id, fields) => ctx.app.inject({ method: 'PUT', url: `/api/v1/assets/${id}`, headers, payload: body(fields) }),
    remove: (id) => ctx.app.inject({ method: 'DELETE', url: `/api/v1/assets/${id}`, headers }),
    get: (url, extraHeaders = {}) => ctx.app.inject({ method: 'GET', url, headers: { ...headers, ...extraHeaders } }),
    async entry(id) {
      const response = await self.get(`/api/v1/assets/${id}`);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], JSON_TYPE);
      return response.json();
    },
    async list(query = '') {
      const response = await self.get(`/api/v1/assets${query}`);
      assert.equal(response.statusCode, 200, response.body);
      return response.json();
    },
  };
  return self;
}

/** A failure as every error is answered: the status, JSON content type, and a non-empty JSON string body. */
function assertRefused(response: LightMyRequestResponse, status: number, pattern?: RegExp): string {
  assert.equal(response.statusCode, status, `expected ${status}, got ${response.statusCode}: ${response.body}`);
  assert.equal(response.headers['content-type'], JSON_TYPE);
  const message: unknown = JSON.parse(response.body);
  assert.equal(typeof message, 'string', `the body is a JSON string, got ${response.body}`);
  assert.ok((message as string).length > 0);
  if (pattern) assert.match(message as string, pattern);
  return message as string;
}

function assertTrue(response: LightMyRequestResponse): void {
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], JSON_TYPE);
  assert.equal(response.body, 'true');
}

// ---------------------------------------------------------------------------------------------
// What is stored

/** Every key the blob store holds (plus temporary files of a file store), whatever the store. */
async function storedBlobKeys(ctx: TestContext): Promise<string[]> {
  if (ctx.blobs instanceof S3BlobStore) {
    // The store's own client and bucket: the test lists what the app wrote, nothing else.
    const { client: s3, bucket } = ctx.blobs as unknown as { client: S3Client; bucket: string };
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    return (listed.Contents ?? []).map((object) => object.Key!).sort();
  }
  const keys: string[] = [];
  const walk = (dir: string, prefix: string) => {
    if (!fs.existsSync(dir)) return;
    for (const item of fs.readdirSync(dir, { withFileTypes: true })) {
      if (item.isDirectory()) walk(path.join(dir, item.name), `${prefix}${item.name}/`);
      else keys.push(`${prefix}${item.name}`);
    }
  };
  walk(path.join(ctx.database.dataDir, 'blobs'), '');
  walk(path.join(ctx.database.dataDir, 'tmp'), 'tmp:');
  return keys.sort();
}

async function assetRows(ctx: TestContext) {
  return ctx.database.db.selectFrom('assets').select(['id', 'account_id', 'blob_key']).orderBy('id').execute();
}

/** The bytes stored are exactly those that rows point at, and no upload is left journalled. */
async function assertNoStrayBytes(ctx: TestContext): Promise<void> {
  const rows = await assetRows(ctx);
  const used = rows
    .map((row) => row.blob_key)
    .filter((key): key is string => key !== null)
    .sort();
  assert.deepEqual(await storedBlobKeys(ctx), used, 'the blob store holds exactly the bytes of existing assets');
  const journal = await ctx.database.db.selectFrom('blob_journal').select('blob_key').execute();
  assert.deepEqual(journal, [], 'no upload is left on the journal');
}

async function blobKeyOf(ctx: TestContext, id: number): Promise<string | null> {
  const row = await ctx.database.db.selectFrom('assets').select('blob_key').where('id', '=', id).executeTakeFirstOrThrow();
  return row.blob_key;
}

function flagsOf(entry: Record<string, unknown>): Record<Flag, unknown> {
  return Object.fromEntries(FLAGS.map((flag) => [flag, entry[flag]])) as Record<Flag, unknown>;
}

const only = (flag: Flag | undefined): Record<Flag, boolean> =>
  Object.fromEntries(FLAGS.map((candidate) => [candidate, candidate === flag])) as Record<Flag, boolean>;

const nowSeconds = () => Math.floor(Date.now() / 1000);
const seconds = (timestamp: unknown) => Date.parse(timestamp as string) / 1000;

// ---------------------------------------------------------------------------------------------

describeEachEngine('assets API: create', (engine) => {
  let ctx: TestContext;
  let api: Client;
  before(async () => {
    ctx = await startTestApp(engine);
    api = client(ctx, (await accountWithKey(ctx.accounts, 'creator')).key);
  });
  after(() => ctx.close());

  test('content creates a local text asset: 200 {"id": "<string>"}, and its entry has every field', async () => {
    const before = nowSeconds();
    const response = await api.create({ name: 'hello.txt', content: 'Hello, world' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], JSON_TYPE);
    const body = response.json();
    assert.deepEqual(Object.keys(body), ['id']);
    assert.equal(typeof body.id, 'string');

    const entry = await api.entry(Number(body.id));
    for (const field of ENTRY_FIELDS) assert.ok(field in entry, `the entry has ${field}`);
    assert.equal(entry.id, Number(body.id));
    assert.match(entry.created_at as string, TIMESTAMP);
    assert.match(entry.updated_at as string, TIMESTAMP);
    assert.ok(seconds(entry.created_at) >= before && seconds(entry.created_at) <= nowSeconds());
    assert.equal(entry.name, 'hello.txt');
    assert.equal(entry.folder, '', 'the root folder is ""');
    assert.deepEqual(flagsOf(entry), only('text'));
    assert.equal(entry.width, null);
    assert.equal(entry.height, null);
    assert.equal(entry.url, null, 'a local asset has no url');
    assert.equal(entry.async, false);
    assert.equal(entry.defer, false);
    assert.equal(entry.size, 12);
    assert.match(entry.content_type as string, /^text\/plain/);
    assert.match(entry.public_url as string, /\/public\/[^/]+\/[^/]+$/);

    const content = await api.get(`/api/v1/assets/${entry.id}/content`);
    assert.equal(content.statusCode, 200);
    assert.equal(content.body, 'Hello, world');
    await assertNoStrayBytes(ctx);
  });

  test("an asset's bytes are sent as stored to a client that accepts gzip, so that Content-Length and ranges hold", async () => {
    const csv = Array.from({ length: 400 }, (_, index) => `row-${index},${index * 3}`).join('\r\n');
    const id = await api.created({ name: 'rows.csv', content: csv });
    const whole = await api.get(`/api/v1/assets/${id}/content`, { 'accept-encoding': 'gzip' });
    assert.equal(whole.statusCode, 200);
    assert.equal(whole.headers['content-encoding'], undefined);
    assert.equal(whole.headers['content-length'], String(Buffer.byteLength(csv)));
    assert.equal(whole.body, csv);
    const part = await api.get(`/api/v1/assets/${id}/content`, { 'accept-encoding': 'gzip', range: 'bytes=0-9' });
    assert.equal(part.statusCode, 206);
    assert.equal(part.body, csv.slice(0, 10));
  });

  test('url creates a remote asset: no bytes stored, url kept, size/content_type/public_url null', async () => {
    const keysBefore = await storedBlobKeys(ctx);
    const id = await api.created({ name: 'promo.mp4', url: 'https://cdn.example.com/promo.mp4', folder: 'landing/videos' });
    const entry = await api.entry(id);
    assert.equal(entry.url, 'https://cdn.example.com/promo.mp4');
    assert.equal(entry.folder, 'landing/videos');
    assert.deepEqual(flagsOf(entry), only('video'));
    assert.equal(entry.width, null);
    assert.equal(entry.height, null);
    assert.equal(entry.size, null);
    assert.equal(entry.content_type, null);
    assert.equal(entry.public_url, null);
    assert.equal(await blobKeyOf(ctx, id), null);
    assert.deepEqual(await storedBlobKeys(ctx), keysBefore, 'a remote asset stores no bytes');
  });

  test('an uploaded file without a name takes the uploaded file name, and its bytes are stored as sent', async () => {
    const bytes = Buffer.from('body { color: red }\n');
    const id = await api.created({ file: { bytes, filename: 'checkout.css', type: 'text/css' } });
    const entry = await api.entry(id);
    assert.equal(entry.name, 'checkout.css');
    assert.deepEqual(flagsOf(entry), only('style'));
    assert.equal(entry.size, bytes.length);
    const content = await api.get(`/api/v1/assets/${id}/content`);
    assert.deepEqual(content.rawPayload, bytes);
  });

  test('a name given with a file wins over the uploaded file name', async () => {
    const id = await api.created({ name: 'chosen.js', file: { bytes: 'void 0;', filename: 'upload.js' } });
    assert.equal((await api.entry(id)).name, 'chosen.js');
  });

  test('creating in a folder that does not exist yet creates it, and its parent folder then exists too', async () => {
    const id = await api.created({ name: 'deep.txt', content: 'x', folder: 'made/on/demand' });
    assert.equal((await api.entry(id)).folder, 'made/on/demand');
    const mover = await api.created({ name: 'mover.txt', content: 'x' });
    assertTrue(await api.update(mover, { folder: 'made/on' }));
    assert.equal((await api.entry(mover)).folder, 'made/on');
  });

  test('names are unique within a folder: a second "dup.txt" in the root is a 400, in another folder it is fine', async () => {
    await api.created({ name: 'dup.txt', content: 'first' });
    const rowsBefore = await assetRows(ctx);
    assertRefused(await api.create({ name: 'dup.txt', content: 'second' }), 400, /dup\.txt/);
    assertRefused(await api.create({ name: 'dup.txt', url: 'https://example.com/dup.txt' }), 400);
    assertRefused(await api.create({ file: { bytes: 'third', filename: 'dup.txt' } }), 400);
    assert.deepEqual(await assetRows(ctx), rowsBefore, 'no row was added');
    await assertNoStrayBytes(ctx);
    const other = await api.created({ name: 'dup.txt', content: 'elsewhere', folder: 'other' });
    assert.equal((await api.entry(other)).folder, 'other');
  });

  const png1 = png(1, 1);
  const refusals: { why: string; fields: Fields | (() => FormData) }[] = [
    // exactly one source
    { why: 'neither content, file nor url is given', fields: { name: 'nothing.txt' } },
    { why: 'only a folder is given', fields: { folder: 'somewhere' } },
    { why: 'both content and url are given', fields: { name: 'both.txt', content: 'x', url: 'https://example.com/a.txt' } },
    { why: 'both content and a file are given', fields: { name: 'both2.txt', content: 'x', file: { bytes: 'y', filename: 'y.txt' } } },
    { why: 'both a file and url are given', fields: { name: 'both3.png', url: 'https://example.com/a.png', file: { bytes: png1, filename: 'a.png' } } },
    {
      why: 'content, file and url are all given',
      fields: { name: 'all.txt', content: 'x', url: 'https://example.com/', file: { bytes: 'z', filename: 'z.txt' } },
    },
    // names
    { why: 'name is missing with content', fields: { content: 'no name' } },
    { why: 'name is missing with url', fields: { url: 'https://example.com/a.png' } },
    { why: 'name is empty', fields: { name: '', content: 'x' } },
    { why: 'name is 256 characters long', fields: { name: `${'n'.repeat(252)}.txt`, content: 'x' } },
    { why: 'name contains a /', fields: { name: 'a/b.txt', content: 'x' } },
    { why: 'name is "."', fields: { name: '.', content: 'x' } },
    { why: 'name is ".."', fields: { name: '..', content: 'x' } },
    { why: 'name contains a tab (a control character)', fields: { name: 'tab\there.txt', content: 'x' } },
    { why: 'name contains a NUL byte', fields: { name: 'nul\u0000.txt', content: 'x' } },
    { why: 'name contains DEL', fields: { name: 'del\u007f.txt', content: 'x' } },
    { why: 'name contains a C1 control character', fields: { name: 'c1\u0085.txt', content: 'x' } },
    { why: 'the uploaded file is named ".." and no name is given', fields: { file: { bytes: 'x', filename: '..' } } },
    // folders
    { why: 'folder has a leading /', fields: { name: 'f1.txt', content: 'x', folder: '/lead' } },
    { why: 'folder has a trailing /', fields: { name: 'f2.txt', content: 'x', folder: 'trail/' } },
    { why: 'folder is only /', fields: { name: 'f3.txt', content: 'x', folder: '/' } },
    { why: 'folder has an empty segment', fields: { name: 'f4.txt', content: 'x', folder: 'a//b' } },
    { why: 'folder is ".."', fields: { name: 'f5.txt', content: 'x', folder: '..' } },
    { why: 'folder has a ".." segment', fields: { name: 'f6.txt', content: 'x', folder: 'a/../b' } },
    { why: 'folder has a "." segment', fields: { name: 'f7.txt', content: 'x', folder: 'a/./b' } },
    { why: 'folder has a control character', fields: { name: 'f8.txt', content: 'x', folder: 'bad\nfolder' } },
    { why: 'folder has a segment of 256 characters', fields: { name: 'f9.txt', content: 'x', folder: `ok/${'s'.repeat(256)}` } },
    { why: 'folder is longer than 1,024 bytes', fields: { name: 'f10.txt', content: 'x', folder: Array(6).fill('x'.repeat(200)).join('/') } },
    {
      why: 'folder is longer than 1,024 bytes of UTF-8 in 343 characters',
      fields: { name: 'f11.txt', content: 'x', folder: `${variedText(255, 3)}/${variedText(87, 3)}` },
    },
    // urls
    { why: 'url is ftp', fields: { name: 'u1.png', url: 'ftp://example.com/a.png' } },
    { why: 'url has no scheme', fields: { name: 'u2.png', url: 'example.com/a.png' } },
    { why: 'url is relative', fields: { name: 'u3.png', url: '/images/a.png' } },
    { why: 'url is javascript:', fields: { name: 'u4.js', url: 'javascript:alert(1)' } },
    { why: 'url is a data: URL', fields: { name: 'u5.txt', url: 'data:text/plain,hello' } },
    { why: 'url is a file: URL', fields: { name: 'u6.txt', url: 'file:///etc/passwd' } },
    { why: 'url is empty', fields: { name: 'u7.txt', url: '' } },
    { why: 'url is not a URL at all', fields: { name: 'u8.txt', url: 'http://' } },
    { why: 'url is longer than 2,048 characters', fields: { name: 'u9.png', url: `https://example.com/${'p'.repeat(2030)}.png` } },
    {
      why: 'url is longer than 2,048 characters once its 230 non-ASCII characters are percent-encoded',
      fields: { name: 'u10.png', url: `https://example.com/${variedText(230, 3)}` },
    },
    // fields
    { why: 'an unknown field is given', fields: { name: 'k1.txt', content: 'x', colour: 'red' } },
    { why: 'a field name differs only in case', fields: { Name: 'k2.txt', content: 'x' } },
    { why: 'id is given', fields: { name: 'k3.txt', content: 'x', id: '12345' } },
    { why: 'created_at is given', fields: { name: 'k4.txt', content: 'x', created_at: '2026-01-01T00:00:00Z' } },
    { why: 'updated_at is given', fields: { name: 'k5.txt', content: 'x', updated_at: '2026-01-01T00:00:00Z' } },
    { why: 'a field is given twice', fields: () => withRepeat('name', 'r1.txt', 'r2.txt', { content: 'x' }) },
    { why: 'two files are uploaded', fields: () => withRepeat('file', { bytes: 'a', filename: 'a.txt' }, { bytes: 'b', filename: 'b.txt' }, {}) },
    { why: 'the file is uploaded under another field name', fields: { name: 'k6.txt', upload: { bytes: 'x', filename: 'k6.txt' } } },
    // booleans
    { why: 'async is "yes"', fields: { name: 'b1.js', content: 'x', async: 'yes' } },
    { why: 'defer is "1"', fields: { name: 'b2.js', content: 'x', defer: '1' } },
    { why: 'defer is empty', fields: { name: 'b3.js', content: 'x', defer: '' } },
    { why: 'image is "no"', fields: { name: 'b4.txt', content: 'x', image: 'no' } },
    // dimensions
    { why: 'width is 0', fields: { name: 'w1.png', url: 'https://example.com/w1.png', width: '0' } },
    { why: 'width is negative', fields: { name: 'w2.png', url: 'https://example.com/w2.png', width: '-5' } },
    { why: 'width is fractional', fields: { name: 'w3.png', url: 'https://example.com/w3.png', width: '1.5' } },
    { why: 'height is not a number', fields: { name: 'w4.png', url: 'https://example.com/w4.png', height: 'tall' } },
    { why: 'height is empty', fields: { name: 'w5.png', url: 'https://example.com/w5.png', height: '' } },
    { why: 'width is given for an uploaded image that is not an image (a text file)', fields: { name: 'w6.txt', content: 'x', width: '10' } },
  ];

  function withRepeat(name: string, first: string | FilePart, second: string | FilePart, rest: Fields): FormData {
    const data = form(rest);
    appendPart(data, name, first);
    appendPart(data, name, second);
    return data;
  }

  for (const { why, fields } of refusals) {
    test(`create is a 400 that keeps nothing when ${why}`, async () => {
      const rowsBefore = await assetRows(ctx);
      const response = await api.create(typeof fields === 'function' ? fields() : fields);
      assertRefused(response, 400);
      assert.deepEqual(await assetRows(ctx), rowsBefore, 'no row was added');
      await assertNoStrayBytes(ctx);
    });
  }

  test('a create while another writer is in its transaction: SQLite refuses it after a 5 s wait with a 400 that keeps nothing, PostgreSQL waits for it', async () => {
    const writer = await accountWithKey(ctx.accounts, 'while-importing');
    const writes = client(ctx, writer.key);
    const rowsBefore = await assetRows(ctx);
    const endTransaction = await holdWrites(ctx.database, writer.accountId);
    let ended = false;
    const release = async () => {
      if (!ended) await endTransaction();
      ended = true;
    };
    try {
      const answer = writes.create({ name: 'during.txt', content: 'x' });
      if (engine === 'sqlite') {
        assertRefused(await answer, 400, /busy with another write/);
        assert.deepEqual(await assetRows(ctx), rowsBefore, 'no row was added');
      } else {
        const settled = await Promise.race([answer.then(() => 'answered'), new Promise((resolve) => setTimeout(resolve, 300, 'waiting'))]);
        assert.equal(settled, 'waiting');
        await release();
        assert.equal((await answer).statusCode, 200);
      }
    } finally {
      await release();
    }
    await assertNoStrayBytes(ctx);
    assert.equal((await writes.create({ name: 'after.txt', content: 'x' })).statusCode, 200, 'the writer done, writes go through');
  });

  test('create is a 400 when the body is JSON rather than a multipart form', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: { 'x-api-key': (await accountWithKey(ctx.accounts, 'creator-json')).key, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'json.txt', content: 'x' }),
    });
    assertRefused(response, 400);
  });

  test('a name of 255 characters, spaces and non-ASCII letters is accepted', async () => {
    const long = `${'n'.repeat(251)}.txt`;
    const id = await api.created({ name: long, content: 'x' });
    assert.equal((await api.entry(id)).name, long);
    const id2 = await api.created({ name: 'Grüße aus Köln – 日本.txt', content: 'x', folder: 'Über uns/2026' });
    const entry = await api.entry(id2);
    assert.equal(entry.name, 'Grüße aus Köln – 日本.txt');
    assert.equal(entry.folder, 'Über uns/2026');
  });

  test('a name is counted in characters: 255 emoji (510 units of a JavaScript string) are accepted, 256 refused', async () => {
    const emoji = (count: number) => '😀'.repeat(count);
    const id = await api.created({ name: emoji(255), content: 'x' });
    assert.equal((await api.entry(id)).name, emoji(255));
    assertRefused(await api.create({ name: emoji(256), content: 'x' }), 400, /name must be 1 to 255 characters/);
  });

  test('the longest folder, name and url, in characters outside ASCII, are accepted and read back on every engine', async () => {
    const folder = `${variedText(255, 2)}/${variedText(255, 2)}/ab`; // 1,024 bytes
    const name = `${variedText(251, 3)}.png`; // 255 characters
    const url = `https://example.com/${variedText(2024, 1)}.png`; // 2,048 characters
    const id = await api.created({ name, folder, url });
    const entry = await api.entry(id);
    assert.deepEqual([entry.name, entry.folder, entry.url], [name, folder, url]);
  });

  test('a url is stored as an address: a host outside ASCII in punycode, other characters percent-encoded, and redirected to', async () => {
    const id = await api.created({ name: 'intl.png', url: 'https://bücher.example/图 1.png?q=é' });
    const expected = 'https://xn--bcher-kva.example/%E5%9B%BE%201.png?q=%C3%A9';
    assert.equal((await api.entry(id)).url, expected);
    const content = await api.get(`/api/v1/assets/${id}/content`);
    assert.equal(content.statusCode, 302, content.body);
    assert.equal(content.headers.location, expected);
  });

  test('a url stored before urls were kept as addresses is redirected to as one', async () => {
    const id = await api.created({ name: 'older.png', url: 'https://example.com/older.png' });
    await ctx.database.db.updateTable('assets').set({ url: 'https://example.com/图.png' }).where('id', '=', id).execute();
    const content = await api.get(`/api/v1/assets/${id}/content`);
    assert.equal(content.statusCode, 302, content.body);
    assert.equal(content.headers.location, 'https://example.com/%E5%9B%BE.png');
  });

  // Type flags from the name's extension (docs/api.md, "Forms"), checked on remote assets, where there are no bytes to sniff.
  const byExtension: [string, Flag][] = [
    ...['png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'svg', 'ico', 'bmp'].map((ext): [string, Flag] => [ext, 'image']),
    ...['mp4', 'webm', 'mov', 'm4v', 'ogv'].map((ext): [string, Flag] => [ext, 'video']),
    ['js', 'script'],
    ['mjs', 'script'],
    ['css', 'style'],
    ...['txt', 'html', 'htm', 'md', 'json', 'xml', 'csv'].map((ext): [string, Flag] => [ext, 'text']),
  ];
  test('the type flag follows the extension for every listed extension, and exactly one flag is set', async () => {
    for (const [ext, flag] of byExtension) {
      const id = await api.created({ name: `ext-test.${ext}`, url: `https://cdn.example.com/file.${ext}`, folder: 'extensions' });
      assert.deepEqual(flagsOf(await api.entry(id)), only(flag), `.${ext} is ${flag}`);
    }
  });

  test('a remote asset with an unknown extension has no type flag', async () => {
    const id = await api.created({ name: 'archive.zip', url: 'https://cdn.example.com/archive.zip' });
    assert.deepEqual(flagsOf(await api.entry(id)), only(undefined));
  });

  test('content of no other type is text; an uploaded file of unknown bytes and extension has no flag', async () => {
    const readme = await api.created({ name: 'README', content: 'plain words' });
    assert.deepEqual(flagsOf(await api.entry(readme)), only('text'));
    const data = await api.created({ name: 'data.bin', file: { bytes: Buffer.from([0x00, 0x13, 0x37, 0xfe, 0x01]), filename: 'data.bin' } });
    assert.deepEqual(flagsOf(await api.entry(data)), only(undefined));
  });

  test('local assets get the flag and content type of their extension: js, css, html, json', async () => {
    const cases: [string, Flag, RegExp][] = [
      ['app.js', 'script', /^text\/javascript/],
      ['site.css', 'style', /^text\/css/],
      ['page.html', 'text', /^text\/html/],
      ['data.json', 'text', /^application\/json/],
    ];
    for (const [name, flag, type] of cases) {
      const id = await api.created({ name, content: 'x', folder: 'local-types' });
      const entry = await api.entry(id);
      assert.deepEqual(flagsOf(entry), only(flag), name);
      assert.match(entry.content_type as string, type, name);
    }
  });

  test('sniffed image bytes win over the name: PNG bytes named .bin, .txt and .mp4 are images served as image/png', async () => {
    for (const filename of ['sniffed.bin', 'sniffed.txt', 'sniffed.mp4', 'sniffed']) {
      const id = await api.created({ file: { bytes: png(4, 3), filename }, folder: 'sniffed' });
      const entry = await api.entry(id);
      assert.deepEqual(flagsOf(entry), only('image'), filename);
      assert.equal(entry.content_type, 'image/png', filename);
      assert.equal(entry.width, 4, filename);
      assert.equal(entry.height, 3, filename);
    }
  });

  test('JPEG bytes named .png are served as image/jpeg', async () => {
    const id = await api.created({ file: { bytes: JPEG, filename: 'actually-a-jpeg.png' } });
    const entry = await api.entry(id);
    assert.equal(entry.content_type, 'image/jpeg');
    assert.equal(entry.image, true);
  });

  test("the upload's own Content-Type header is never believed", async () => {
    const image = await api.created({ file: { bytes: png(2, 2), filename: 'lying.png', type: 'text/html' } });
    assert.equal((await api.entry(image)).content_type, 'image/png');
    const text = await api.created({ file: { bytes: 'just words', filename: 'lying.txt', type: 'image/png' } });
    const entry = await api.entry(text);
    assert.deepEqual(flagsOf(entry), only('text'));
    assert.match(entry.content_type as string, /^text\/plain/);
    const served = await api.get(`/api/v1/assets/${text}/content`);
    assert.match(String(served.headers['content-type']), /^text\/plain/);
  });

  test('flags given in the form win over detected ones, one by one', async () => {
    const script = await api.created({ name: 'notreally.js', content: 'x', script: 'f', text: 't' });
    assert.deepEqual(flagsOf(await api.entry(script)), only('text'));
    const both = await api.created({ name: 'both.css', content: 'x', script: 'true' });
    assert.deepEqual(flagsOf(await api.entry(both)), { ...only('style'), script: true }, 'style stays detected, script is added');
    const video = await api.created({ name: 'stream', url: 'https://example.com/stream', video: 't' });
    assert.deepEqual(flagsOf(await api.entry(video)), only('video'));
    const noImage = await api.created({ file: { bytes: png(2, 2), filename: 'not-an-image.png' }, image: 'false' });
    const entry = await api.entry(noImage);
    assert.equal(entry.image, false);
    assert.equal(entry.width, null, 'a non-image has no width');
    assert.equal(entry.height, null);
  });

  test('a real PNG built in the test has its width and height read from its bytes', async () => {
    const id = await api.created({ file: { bytes: png(7, 5), filename: 'built.png' } });
    const entry = await api.entry(id);
    assert.deepEqual(flagsOf(entry), only('image'));
    assert.equal(entry.width, 7);
    assert.equal(entry.height, 5);
    assert.equal(entry.content_type, 'image/png');
  });

  test('a real JPEG has its width and height read from its bytes', async () => {
    assert.deepEqual(jpegSize(JPEG), { width: 320, height: 180 }, 'the fixture is 320 x 180');
    const id = await api.created({ file: { bytes: JPEG, filename: 'hero.jpg' } });
    const entry = await api.entry(id);
    assert.deepEqual(flagsOf(entry), only('image'));
    assert.equal(entry.width, 320);
    assert.equal(entry.height, 180);
    assert.equal(entry.content_type, 'image/jpeg');
    assert.equal(entry.size, JPEG.length);
  });

  test('width and height given in the form win over those read from the bytes, each on its own', async () => {
    const both = await api.created({ name: 'hero-2x.jpg', file: { bytes: JPEG, filename: 'hero.jpg' }, width: '640', height: '360' });
    const bothEntry = await api.entry(both);
    assert.equal(bothEntry.width, 640);
    assert.equal(bothEntry.height, 360);
    const widthOnly = await api.created({ name: 'wide.png', file: { bytes: png(7, 5), filename: 'wide.png' }, width: '70' });
    const widthEntry = await api.entry(widthOnly);
    assert.equal(widthEntry.width, 70);
    assert.equal(widthEntry.height, 5, 'the height not given is read from the bytes');
  });

  test('width and height of a remote image are taken as given; unknown ones are null', async () => {
    const given = await api.created({ name: 'remote.png', url: 'https://example.com/remote.png', width: '1200', height: '630' });
    const entry = await api.entry(given);
    assert.equal(entry.width, 1200);
    assert.equal(entry.height, 630);
    const unknown = await api.created({ name: 'remote2.png', url: 'https://example.com/remote2.png' });
    assert.equal((await api.entry(unknown)).width, null);
  });

  test('async and defer default to false, and each flag given sets only itself', async () => {
    const plain = await api.entry(await api.created({ name: 'plain.js', content: 'x', folder: 'scripts' }));
    assert.deepEqual([plain.async, plain.defer], [false, false]);
    const deferred = await api.entry(await api.created({ name: 'deferred.js', content: 'x', folder: 'scripts', defer: 't' }));
    assert.deepEqual([deferred.async, deferred.defer], [false, true]);
    const asynchronous = await api.entry(await api.created({ name: 'async.js', url: 'https://example.com/a.js', folder: 'scripts', async: 'true' }));
    assert.deepEqual([asynchronous.async, asynchronous.defer], [true, false]);
    const both = await api.entry(await api.created({ name: 'both.js', content: 'x', folder: 'scripts', async: 't', defer: 'true' }));
    assert.deepEqual([both.async, both.defer], [true, true]);
    const explicit = await api.entry(await api.created({ name: 'off.js', content: 'x', folder: 'scripts', async: 'f', defer: 'false' }));
    assert.deepEqual([explicit.async, explicit.defer], [false, false]);
  });

  test('after everything above, the store holds exactly the bytes of the assets that exist', async () => {
    await assertNoStrayBytes(ctx);
  });
});

/** Answers within `ms`, or fails: a request that never answers must fail its test, not stall the run. */
async function answerWithin<T>(ms: number, request: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([request, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describeEachEngine('assets API: malformed multipart bodies', (engine) => {
  let ctx: TestContext;
  let key: string;
  before(async () => {
    ctx = await startTestApp(engine);
    key = (await accountWithKey(ctx.accounts, 'malformed')).key;
  });
  after(() => ctx.close());

  test('a text field that is not UTF-8 is a 400 that says so, and nothing is kept', async () => {
    const boundary = 'not-utf8-boundary';
    const part = (name: string, value: Buffer) =>
      Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`), value, Buffer.from('\r\n')]);
    const count = async () => (await ctx.app.inject({ url: '/api/v1/assets', headers: { 'x-api-key': key } })).json().totalEntries;
    const before = await count();
    for (const [fields, says] of [
      [
        [part('name', Buffer.from('bytes.txt')), part('content', Buffer.from([0x61, 0xff, 0xfe, 0x62]))],
        /content must be UTF-8 text; upload other bytes as a file/,
      ],
      [[part('name', Buffer.from([0x6e, 0xc3])), part('content', Buffer.from('x'))], /name must be UTF-8 text/],
    ] as const) {
      const response = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/assets',
        headers: { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload: Buffer.concat([...fields, Buffer.from(`--${boundary}--\r\n`)]),
      });
      assertRefused(response, 400, says);
    }
    assert.equal(await count(), before);
  });

  const boundary = 'cut-short-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\ncut.txt\r\n--${boundary}\r\n`;
  const bodies: [string, string][] = [
    ['a text field', `${head}Content-Disposition: form-data; name="content"\r\n\r\npartial by`],
    ['the file part', `${head}Content-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\npartial by`],
  ];
  for (const [part, payload] of bodies) {
    test(`a whole request whose multipart body ends inside ${part} is answered with a 400 that keeps nothing`, async () => {
      const response = await answerWithin(
        3000,
        ctx.app.inject({
          method: 'POST',
          url: '/api/v1/assets',
          headers: { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}` },
          payload,
        }),
      );
      assertRefused(response, 400);
      assert.deepEqual(await assetRows(ctx), []);
      await assertNoStrayBytes(ctx);
    });
  }
});

describeEachEngine('assets API: uploads over MAX_UPLOAD_BYTES', (engine) => {
  const LIMIT = 1024;
  let ctx: TestContext;
  let api: Client;
  before(async () => {
    ctx = await startTestApp(engine, { maxUploadBytes: LIMIT });
    api = client(ctx, (await accountWithKey(ctx.accounts, 'limited')).key);
  });
  after(() => ctx.close());

  test('a file one byte over the limit is a 400 that keeps neither a row nor bytes', async () => {
    const response = await api.create({ name: 'big.bin', file: { bytes: Buffer.alloc(LIMIT + 1, 7), filename: 'big.bin' } });
    assertRefused(response, 400);
    assert.deepEqual(await assetRows(ctx), []);
    assert.deepEqual(await storedBlobKeys(ctx), [], 'no bytes are left in the store');
    await assertNoStrayBytes(ctx);
  });

  test('a file far over the limit, with fields after it, is a 400 that keeps nothing', async () => {
    const data = new FormData();
    appendPart(data, 'file', { bytes: Buffer.alloc(LIMIT * 8, 1), filename: 'bigger.bin' });
    data.append('name', 'bigger.bin');
    assertRefused(await api.create(data), 400);
    assert.deepEqual(await assetRows(ctx), []);
    assert.deepEqual(await storedBlobKeys(ctx), []);
    await assertNoStrayBytes(ctx);
  });

  test('content over the limit is a 400 that keeps nothing', async () => {
    assertRefused(await api.create({ name: 'long.txt', content: 'c'.repeat(LIMIT + 1) }), 400);
    assert.deepEqual(await assetRows(ctx), []);
    assert.deepEqual(await storedBlobKeys(ctx), []);
  });

  test('a file of exactly the limit is accepted', async () => {
    const id = await api.created({ name: 'exact.bin', file: { bytes: Buffer.alloc(LIMIT, 3), filename: 'exact.bin' } });
    assert.equal((await api.entry(id)).size, LIMIT);
  });

  test('replacing bytes with a file over the limit is a 400 that keeps the old bytes and the old entry', async () => {
    const id = await api.created({ name: 'keep.txt', content: 'the old bytes' });
    const before = await api.entry(id);
    const response = await api.update(id, { file: { bytes: Buffer.alloc(LIMIT + 100, 9), filename: 'keep.txt' } });
    assertRefused(response, 400);
    assert.deepEqual(await api.entry(id), before);
    assert.equal((await api.get(`/api/v1/assets/${id}/content`)).body, 'the old bytes');
    await assertNoStrayBytes(ctx);
  });
});

// ---------------------------------------------------------------------------------------------
// Requests on a real connection, for what inject cannot show: an answer given while the body is
// still being sent, and a connection the service closes. Each body below is left unfinished, so
// a service that read a form to its end before judging it would never answer.

const BOUNDARY = 'bounded-input-boundary';

/** The start of a part; its value follows. */
const partHead = (name: string, filename?: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n`;
const endOfPart = '\r\n';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface RawUpload {
  socket: net.Socket;
  /** What the service sent, once it has closed the connection. */
  closed: Promise<RawAnswer | undefined>;
}

/** POST /api/v1/assets on a new connection: the request's headers, then `body` as far as the test sends it. */
function openUpload(address: string, key: string, body: string | Buffer, headers: Record<string, string> = { 'transfer-encoding': 'chunked' }): RawUpload {
  const { hostname, port } = new URL(address);
  const socket = net.connect(Number(port), hostname);
  // Writes after the service has answered and closed fail; what it answered is what counts.
  socket.on('error', () => {});
  const lines = [
    'POST /api/v1/assets HTTP/1.1',
    `Host: ${hostname}:${port}`,
    `X-API-Key: ${key}`,
    `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  if (body.length > 0) sendBodyChunk(socket, body, headers);
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  const closed = new Promise<RawAnswer | undefined>((resolve) => socket.once('close', () => resolve(parseAnswer(Buffer.concat(received)))));
  return { socket, closed };
}

/** Writes body bytes, framed as a chunk when the body is sent chunked. */
function sendBodyChunk(socket: net.Socket, bytes: string | Buffer, headers: Record<string, string>): void {
  if (socket.destroyed) return;
  if (headers['transfer-encoding'] !== 'chunked') {
    socket.write(bytes);
    return;
  }
  socket.write(`${Buffer.byteLength(bytes).toString(16)}\r\n`);
  socket.write(bytes);
  socket.write('\r\n');
}

function parseAnswer(raw: Buffer): RawAnswer | undefined {
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...headerLines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4) };
}

/** The answer of a refused upload: the status, a JSON string saying why, its request id, and the connection closed. */
function assertRefusedMidBody(answer: RawAnswer | undefined, status: number, pattern: RegExp): void {
  assert.ok(answer, 'the service answered before closing the connection');
  assert.equal(answer.status, status, answer.body);
  assert.equal(answer.headers['content-type'], JSON_TYPE);
  assert.match(JSON.parse(answer.body) as string, pattern);
  assert.equal(answer.headers.connection, 'close', 'the answer closes the connection, so the client stops sending');
}

/** Polls `check` until it holds, for at most `ms`; the last failure is the test's. */
async function eventually(ms: number, check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function journalledKeys(ctx: TestContext): Promise<string[]> {
  return (await ctx.database.db.selectFrom('blob_journal').select('blob_key').execute()).map((row) => row.blob_key);
}

describeEachEngine('assets API: a form is refused at its first bad part, before the rest of the body', (engine) => {
  const LIMIT = 64 * 1024;
  let ctx: TestContext;
  let key: string;
  let address: string;
  before(async () => {
    ctx = await startTestApp(engine, { maxUploadBytes: LIMIT });
    key = (await accountWithKey(ctx.accounts, 'bounded')).key;
    address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => ctx.close());

  test('an unknown field is refused by its name: the 400 names it while its value is still being sent', async () => {
    const upload = openUpload(address, key, `${partHead('colour')}${'x'.repeat(1024 * 1024)}`);
    const answer = await answerWithin(5000, upload.closed);
    assertRefusedMidBody(answer, 400, /^unknown field colour; the fields are name, content, url, .*file$/);
    assert.ok(answer!.headers['x-request-id']);
    assert.deepEqual(await assetRows(ctx), []);
    await assertNoStrayBytes(ctx);
  });

  test('a client that goes on sending after the refusal, reading nothing for a while, still receives it', async () => {
    const upload = openUpload(address, key, partHead('colour'));
    upload.socket.pause();
    // Were the socket closed as soon as the answer is written, these writes would be reset, and the
    // client's system would drop the unread answer with the connection.
    for (let sent = 0; sent < 30; sent++) {
      sendBodyChunk(upload.socket, Buffer.alloc(64 * 1024, 'x'), { 'transfer-encoding': 'chunked' });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    upload.socket.resume();
    assertRefusedMidBody(await answerWithin(5000, upload.closed), 400, /^unknown field colour;/);
  });

  test('a field read as it arrives is refused once it passes its limit, and the fields before it are not kept', async () => {
    const upload = openUpload(address, key, `${partHead('name')}a.png${endOfPart}${partHead('url')}https://example.com/${'p'.repeat(64 * 1024)}`);
    assertRefusedMidBody(await answerWithin(5000, upload.closed), 400, /^url is too long: at most 8192 bytes$/);
    assert.deepEqual(await assetRows(ctx), []);
  });

  test('a Content-Length longer than any form within MAX_UPLOAD_BYTES can be is refused before the body is sent', async () => {
    const declared = LIMIT + FORM_OVERHEAD_BYTES + 1;
    const upload = openUpload(address, key, '', { 'content-length': String(declared) });
    const answer = await answerWithin(5000, upload.closed);
    assertRefusedMidBody(answer, 400, new RegExp(`larger than the limit of ${LIMIT} bytes`));
    assert.ok(answer!.headers['x-request-id']);
    await assertNoStrayBytes(ctx);
  });

  test('a file is refused once its bytes pass MAX_UPLOAD_BYTES, before the body ends, and its staged bytes are removed', async () => {
    const upload = openUpload(address, key, `${partHead('file', 'big.bin')}${'b'.repeat(LIMIT + 1)}`);
    assertRefusedMidBody(await answerWithin(5000, upload.closed), 400, new RegExp(`larger than the limit of ${LIMIT} bytes`));
    assert.deepEqual(await assetRows(ctx), []);
    await assertNoStrayBytes(ctx);
  });

  test('a whole form within the limits, sent on a connection, is still created', async () => {
    const body = `${partHead('name')}whole.txt${endOfPart}${partHead('file', 'whole.txt')}${'w'.repeat(LIMIT)}${endOfPart}--${BOUNDARY}--\r\n`;
    const upload = openUpload(address, key, body, { 'content-length': String(Buffer.byteLength(body)), connection: 'close' });
    const answer = await answerWithin(5000, upload.closed);
    assert.equal(answer?.status, 200, answer?.body);
    assert.equal((await assetRows(ctx)).length, 1);
    await assertNoStrayBytes(ctx);
  });
});

describeEachEngine('assets API: uploads that arrive too slowly are cut off', (engine) => {
  interface SlowApp {
    ctx: TestContext;
    key: string;
    address: string;
  }
  // One service whose idle timeout comes first, one whose whole-request deadline does.
  let idle: SlowApp;
  let deadline: SlowApp;
  const startSlowApp = async (overrides: Partial<Config>): Promise<SlowApp> => {
    const ctx = await startTestApp(engine, overrides);
    const key = (await accountWithKey(ctx.accounts, 'slow')).key;
    return { ctx, key, address: await ctx.app.listen({ port: 0, host: '127.0.0.1' }) };
  };
  before(async () => {
    idle = await startSlowApp({ idleTimeoutMs: 1000, requestTimeoutMs: 30_000 });
    deadline = await startSlowApp({ idleTimeoutMs: 30_000, requestTimeoutMs: 3000 });
  });
  after(async () => {
    await idle.ctx.close();
    await deadline.ctx.close();
  });

  /**
   * Sends the start of a file and waits until its bytes are being staged (journalled; on disk, a
   * temporary file). It goes on sending meanwhile, so that a service slow to start staging (a
   * busy machine) does not find the connection idle first.
   */
  async function startStaging({ ctx, key, address }: SlowApp): Promise<RawUpload> {
    const upload = openUpload(address, key, `${partHead('name')}slow.bin${endOfPart}${partHead('file', 'slow.bin')}${'s'.repeat(10_000)}`);
    const keepSending = setInterval(() => sendBodyChunk(upload.socket, 's', { 'transfer-encoding': 'chunked' }), 100);
    try {
      await eventually(5000, async () => {
        assert.equal((await journalledKeys(ctx)).length, 1, 'the upload is being staged');
        if (engine === 'sqlite') assert.equal(fs.readdirSync(path.join(ctx.database.dataDir, 'tmp')).length, 1, 'into a temporary file');
      });
    } finally {
      clearInterval(keepSending);
    }
    return upload;
  }

  /** Nothing of the cut-off upload is left: no row, no bytes, no temporary file, no journal entry. */
  async function assertNothingLeft(ctx: TestContext): Promise<void> {
    await eventually(5000, async () => {
      assert.deepEqual(await assetRows(ctx), []);
      await assertNoStrayBytes(ctx);
    });
  }

  test('an upload that stops sending is cut off after IDLE_TIMEOUT_MS, and its temporary bytes are removed', async () => {
    const upload = await startStaging(idle);
    await answerWithin(5000, upload.closed);
    await assertNothingLeft(idle.ctx);
  });

  test('an upload not arrived whole after REQUEST_TIMEOUT_MS is answered with a 408 that says so, and its temporary bytes are removed', async () => {
    const upload = await startStaging(deadline);
    const answer = await answerWithin(5000, upload.closed);
    assert.ok(answer, 'the service answered before closing the connection');
    assert.equal(answer.status, 408, answer.body);
    assert.equal(answer.headers['content-type'], JSON_TYPE);
    assert.equal(JSON.parse(answer.body), 'the request took too long to arrive: a request must arrive whole within 3 seconds');
    await assertNothingLeft(deadline.ctx);
  });

  test('an upload that keeps trickling, never idle, is cut off after REQUEST_TIMEOUT_MS, and its temporary bytes are removed', async () => {
    const upload = await startStaging(deadline);
    const trickle = setInterval(() => sendBodyChunk(upload.socket, 's', { 'transfer-encoding': 'chunked' }), 100);
    try {
      // Node closes the connection right after its 408, as Node's own answer does: a byte sent
      // just then can reset the connection before the client reads the answer, so only the cut
      // is certain here (the answer is checked above, on a client that is not sending).
      const answer = await answerWithin(5000, upload.closed);
      if (answer) assert.equal(answer.status, 408, answer.body);
    } finally {
      clearInterval(trickle);
    }
    await assertNothingLeft(deadline.ctx);
  });
});

describeEachEngine('assets API: update and delete', (engine) => {
  let ctx: TestContext;
  let api: Client;
  before(async () => {
    ctx = await startTestApp(engine);
    api = client(ctx, (await accountWithKey(ctx.accounts, 'updater')).key);
    await api.created({ name: 'resident.txt', content: 'x', folder: 'docs' });
    await api.created({ name: 'leaf.txt', content: 'x', folder: 'deep/er' });
  });
  after(() => ctx.close());

  test('a rename sends only name: 200 true, the name changes and nothing else does', async () => {
    const id = await api.created({ name: 'old-name.js', content: 'x', folder: 'docs', defer: 't' });
    const before = await api.entry(id);
    const t0 = nowSeconds();
    assertTrue(await api.update(id, { name: 'new-name.js' }));
    const after = await api.entry(id);
    assert.equal(after.name, 'new-name.js');
    assert.ok(seconds(after.updated_at) >= t0, 'updated_at becomes now');
    assert.ok(seconds(after.updated_at) <= nowSeconds());
    const { name: _a, updated_at: _b, ...restBefore } = before;
    const { name: _c, updated_at: _d, ...restAfter } = after;
    assert.deepEqual(restAfter, restBefore, 'folder, flags, bytes and public URL are unchanged');
  });

  test('a move sends only folder: 200 true, the folder changes and nothing else does', async () => {
    const id = await api.created({ name: 'traveller.txt', content: 'x' });
    const before = await api.entry(id);
    assertTrue(await api.update(id, { folder: 'docs' }));
    const after = await api.entry(id);
    assert.equal(after.folder, 'docs');
    const { folder: _a, updated_at: _b, ...restBefore } = before;
    const { folder: _c, updated_at: _d, ...restAfter } = after;
    assert.deepEqual(restAfter, restBefore);
    assertTrue(await api.update(id, { folder: '' }));
    assert.equal((await api.entry(id)).folder, '', 'the root always exists');
  });

  test('a folder exists while a folder below it holds an asset, but a mere name prefix does not count', async () => {
    const id = await api.created({ name: 'climber.txt', content: 'x' });
    assertTrue(await api.update(id, { folder: 'deep' }));
    assert.equal((await api.entry(id)).folder, 'deep');
    assertRefused(await api.update(id, { folder: 'dee' }), 400, /dee/);
    assertRefused(await api.update(id, { folder: 'deep/e' }), 400);
    assertRefused(await api.update(id, { folder: 'deep/er/est' }), 400);
    assert.equal((await api.entry(id)).folder, 'deep');
  });

  test('a folder stops existing when its last asset leaves it', async () => {
    const id = await api.created({ name: 'lonely.txt', content: 'x', folder: 'ephemeral' });
    assertTrue(await api.update(id, { folder: '' }));
    const other = await api.created({ name: 'other.txt', content: 'x' });
    assertRefused(await api.update(other, { folder: 'ephemeral' }), 400);
  });

  const refusedUpdates: { why: string; fields: Fields }[] = [
    { why: 'a rename comes with folder', fields: { name: 'x1.txt', folder: 'docs' } },
    { why: 'a rename comes with content', fields: { name: 'x2.txt', content: 'new' } },
    { why: 'a rename comes with a file', fields: { name: 'x3.txt', file: { bytes: 'new', filename: 'x3.txt' } } },
    { why: 'a rename comes with a flag', fields: { name: 'x4.txt', async: 't' } },
    { why: 'a move comes with content', fields: { folder: 'docs', content: 'new' } },
    { why: 'a move comes with a flag', fields: { folder: 'docs', text: 't' } },
    { why: 'a move goes to a folder that does not exist', fields: { folder: 'nowhere' } },
    { why: 'a move goes to an invalid folder path', fields: { folder: '/docs' } },
    { why: 'a move goes to a folder with a ".." segment', fields: { folder: 'docs/..' } },
    { why: 'a rename gives an invalid name', fields: { name: 'a/b' } },
    { why: 'a rename gives an empty name', fields: { name: '' } },
    { why: 'a rename gives ".."', fields: { name: '..' } },
    { why: 'the form is empty', fields: {} },
    { why: 'id is given', fields: { id: '1' } },
    { why: 'created_at is given', fields: { created_at: '2026-01-01T00:00:00Z' } },
    { why: 'updated_at is given', fields: { updated_at: '2026-01-01T00:00:00Z' } },
    { why: 'content and url are both given', fields: { content: 'x', url: 'https://example.com/x' } },
    { why: 'content and a file are both given', fields: { content: 'x', file: { bytes: 'y', filename: 'y.txt' } } },
    { why: 'a file and url are both given', fields: { url: 'https://example.com/x', file: { bytes: 'y', filename: 'y.txt' } } },
    { why: 'an unknown field is given', fields: { colour: 'red' } },
    { why: 'the url is not http or https', fields: { url: 'ftp://example.com/x.txt' } },
    { why: 'a flag is not a boolean', fields: { defer: 'maybe' } },
    { why: 'width is given for a text asset', fields: { width: '10' } },
  ];
  for (const { why, fields } of refusedUpdates) {
    test(`an update is a 400 that changes nothing when ${why}`, async () => {
      const id = await api.created({ name: `target-${refusedUpdates.findIndex((r) => r.why === why)}.txt`, content: 'original' });
      const before = await api.entry(id);
      assertRefused(await api.update(id, fields), 400);
      assert.deepEqual(await api.entry(id), before);
      assert.equal((await api.get(`/api/v1/assets/${id}/content`)).body, 'original');
      await assertNoStrayBytes(ctx);
    });
  }

  test('a rename or move onto a name the folder already holds is a 400 that changes nothing', async () => {
    await api.created({ name: 'taken.txt', content: 'x', folder: 'docs' });
    const renamed = await api.created({ name: 'renamer.txt', content: 'x', folder: 'docs' });
    assertRefused(await api.update(renamed, { name: 'taken.txt' }), 400, /taken\.txt/);
    assert.equal((await api.entry(renamed)).name, 'renamer.txt');
    const moved = await api.created({ name: 'taken.txt', content: 'x' });
    assertRefused(await api.update(moved, { folder: 'docs' }), 400, /taken\.txt/);
    assert.equal((await api.entry(moved)).folder, '');
  });

  test('an update of an id that does not exist, or is not a number, is a 400', async () => {
    for (const id of ['999999', 'abc', '0', '-1', '1.5']) {
      assertRefused(await api.update(id, { name: 'ghost.txt' }), 400);
    }
  });

  test('content replaces the bytes: the new bytes are served, size and updated_at follow', async () => {
    const id = await api.created({ name: 'replace-me.txt', content: 'first version' });
    const oldKey = await blobKeyOf(ctx, id);
    assertTrue(await api.update(id, { content: 'second, longer version' }));
    const entry = await api.entry(id);
    assert.equal(entry.size, 'second, longer version'.length);
    assert.equal((await api.get(`/api/v1/assets/${id}/content`)).body, 'second, longer version');
    assert.notEqual(await blobKeyOf(ctx, id), oldKey);
    assert.ok(!(await storedBlobKeys(ctx)).includes(oldKey!), 'the old bytes are gone');
    await assertNoStrayBytes(ctx);
  });

  test('replacing an image re-reads width and height, even where they had been given before', async () => {
    const id = await api.created({ name: 'resize.png', file: { bytes: png(3, 2), filename: 'resize.png' }, width: '300', height: '200' });
    assert.deepEqual([(await api.entry(id)).width, (await api.entry(id)).height], [300, 200]);
    assertTrue(await api.update(id, { file: { bytes: png(5, 4), filename: 'whatever.png' } }));
    const entry = await api.entry(id);
    assert.deepEqual([entry.width, entry.height], [5, 4]);
    assert.equal(entry.name, 'resize.png', 'replacing the bytes keeps the name');
    assertTrue(await api.update(id, { file: { bytes: png(9, 9), filename: 'x.png' }, width: '90' }));
    const given = await api.entry(id);
    assert.deepEqual([given.width, given.height], [90, 9], 'a width given with the new bytes wins');
  });

  test('replacing bytes re-detects the type from the name and the new bytes', async () => {
    const id = await api.created({ name: 'mystery', file: { bytes: Buffer.from([1, 2, 3]), filename: 'mystery' } });
    assert.deepEqual(flagsOf(await api.entry(id)), only(undefined));
    assertTrue(await api.update(id, { file: { bytes: png(2, 2), filename: 'mystery' } }));
    const entry = await api.entry(id);
    assert.deepEqual(flagsOf(entry), only('image'));
    assert.equal(entry.content_type, 'image/png');
  });

  test('a local asset made remote by url loses its bytes; its content answers 302', async () => {
    const id = await api.created({ name: 'goes-remote.png', file: { bytes: png(2, 3), filename: 'goes-remote.png' } });
    const oldKey = await blobKeyOf(ctx, id);
    assert.ok((await storedBlobKeys(ctx)).includes(oldKey!));
    assertTrue(await api.update(id, { url: 'https://cdn.example.com/remote.png' }));
    const entry = await api.entry(id);
    assert.equal(entry.url, 'https://cdn.example.com/remote.png');
    assert.equal(entry.size, null);
    assert.equal(entry.content_type, null);
    assert.equal(entry.public_url, null);
    assert.equal(entry.image, true);
    assert.equal(await blobKeyOf(ctx, id), null);
    assert.ok(!(await storedBlobKeys(ctx)).includes(oldKey!), 'its local bytes are removed');
    const content = await api.get(`/api/v1/assets/${id}/content`);
    assert.equal(content.statusCode, 302);
    assert.equal(content.headers.location, 'https://cdn.example.com/remote.png');
    await assertNoStrayBytes(ctx);
  });

  test('a remote asset given a file becomes local: url null, bytes served, dimensions read', async () => {
    const id = await api.created({ name: 'comes-home.png', url: 'https://cdn.example.com/comes-home.png' });
    const bytes = png(6, 4);
    assertTrue(await api.update(id, { file: { bytes, filename: 'comes-home.png' } }));
    const entry = await api.entry(id);
    assert.equal(entry.url, null);
    assert.equal(entry.size, bytes.length);
    assert.deepEqual([entry.width, entry.height], [6, 4]);
    assert.equal(typeof entry.public_url, 'string');
    const content = await api.get(`/api/v1/assets/${id}/content`);
    assert.equal(content.statusCode, 200);
    assert.deepEqual(content.rawPayload, bytes);
    await assertNoStrayBytes(ctx);
  });

  test('a remote asset given content becomes a local one', async () => {
    const id = await api.created({ name: 'notes.md', url: 'https://example.com/notes.md' });
    assertTrue(await api.update(id, { content: '# Notes' }));
    const entry = await api.entry(id);
    assert.equal(entry.url, null);
    assert.equal((await api.get(`/api/v1/assets/${id}/content`)).body, '# Notes');
  });

  test('a remote asset can be pointed at another url', async () => {
    const id = await api.created({ name: 'moving-target.js', url: 'https://a.example.com/x.js' });
    assertTrue(await api.update(id, { url: 'https://b.example.com/x.js' }));
    assert.equal((await api.entry(id)).url, 'https://b.example.com/x.js');
  });

  test('attribute updates change only the flags given', async () => {
    const id = await api.created({ name: 'tuned.js', content: 'x', defer: 't' });
    assertTrue(await api.update(id, { async: 't' }));
    let entry = await api.entry(id);
    assert.deepEqual([entry.async, entry.defer], [true, true], 'async set, defer kept');
    assertTrue(await api.update(id, { defer: 'f' }));
    entry = await api.entry(id);
    assert.deepEqual([entry.async, entry.defer], [true, false]);
    assertTrue(await api.update(id, { style: 't' }));
    assert.deepEqual(flagsOf(await api.entry(id)), { ...only('script'), style: true });
  });

  test('width and height of an image can be updated on their own', async () => {
    const id = await api.created({ file: { bytes: png(3, 3), filename: 'dims.png' } });
    assertTrue(await api.update(id, { width: '30' }));
    const entry = await api.entry(id);
    assert.deepEqual([entry.width, entry.height], [30, 3]);
  });

  test('delete: 200 true, then the entry, its content and its bytes are gone, and a second delete is a 400', async () => {
    const id = await api.created({ name: 'doomed.txt', content: 'bye' });
    const key = await blobKeyOf(ctx, id);
    assert.ok((await storedBlobKeys(ctx)).includes(key!));
    assertTrue(await api.remove(id));
    assertRefused(await api.get(`/api/v1/assets/${id}`), 404);
    assertRefused(await api.get(`/api/v1/assets/${id}/content`), 404);
    assert.ok(!(await storedBlobKeys(ctx)).includes(key!), 'the bytes go too');
    assert.ok(!(await api.list(`?id=${id}`)).entries.length, 'the listing no longer has it');
    assertRefused(await api.remove(id), 400, new RegExp(String(id)));
    assertRefused(await api.update(id, { name: 'revived.txt' }), 400);
    await assertNoStrayBytes(ctx);
  });

  test('a deleted name is free again in its folder', async () => {
    const id = await api.created({ name: 'recycled.txt', content: 'x', folder: 'docs' });
    assertTrue(await api.remove(id));
    await api.created({ name: 'recycled.txt', content: 'y', folder: 'docs' });
  });

  test('delete of a remote asset is 200 true', async () => {
    const id = await api.created({ name: 'remote-doomed.png', url: 'https://example.com/r.png' });
    assertTrue(await api.remove(id));
    assertRefused(await api.get(`/api/v1/assets/${id}`), 404);
  });

  test('delete of an id that does not exist, or is not a number, is a 400', async () => {
    for (const id of ['999999', 'abc', '0', '1e3']) assertRefused(await api.remove(id), 400);
  });

  test('an asset id with a malformed percent-encoding still answers as every error does: a JSON string with X-Request-Id', async () => {
    const requests: [string, () => Promise<LightMyRequestResponse>][] = [
      ['GET', () => api.get('/api/v1/assets/%zz')],
      ['GET content', () => api.get('/api/v1/assets/%zz/content')],
      ['PUT', () => api.update('%zz', { name: 'x.txt' })],
      ['DELETE', () => api.remove('%zz')],
    ];
    for (const [what, send] of requests) {
      const response = await send();
      assert.ok([400, 404].includes(response.statusCode), `${what}: ${response.statusCode}`);
      assert.equal(response.headers['content-type'], JSON_TYPE, `${what}: ${response.body}`);
      assert.equal(typeof JSON.parse(response.body), 'string', `${what}: ${response.body}`);
      assert.ok(response.headers['x-request-id'], `${what} carries X-Request-Id`);
    }
  });

  test('GET of an id that does not exist, or is not a number, is a 404 with a message', async () => {
    for (const id of ['999999', 'abc', '0', '-3']) assertRefused(await api.get(`/api/v1/assets/${id}`), 404);
  });
});

describeEachEngine('assets API: listing', (engine) => {
  let ctx: TestContext;
  let api: Client;
  const ids: number[] = [];
  before(async () => {
    ctx = await startTestApp(engine);
    api = client(ctx, (await accountWithKey(ctx.accounts, 'lister')).key);
    for (let i = 0; i < 101; i++) {
      const name = `banner-${String(i).padStart(3, '0')}.png`;
      ids.push(await api.created({ name, url: `https://cdn.example.com/${name}`, folder: 'bulk' }));
    }
    ids.push(await api.created({ name: 'timer.js', content: 'x', folder: 'bulk/scripts', async: 't' }));
    ids.push(await api.created({ name: 'terms.txt', content: 'x' }));
    ids.push(await api.created({ name: 'theme.css', content: 'x', folder: 'styles' }));
  });
  after(() => ctx.close());

  test('without page: the first 100 entries in ascending id order, with the true totals', async () => {
    const page = await api.list();
    assert.deepEqual(Object.keys(page).sort(), ['entries', 'page', 'totalEntries', 'totalPages']);
    assert.equal(page.page, 1);
    assert.equal(page.totalEntries, 104);
    assert.equal(page.totalPages, 2);
    assert.deepEqual(
      page.entries.map((entry) => entry.id),
      ids.slice(0, 100),
    );
    for (const field of ENTRY_FIELDS) assert.ok(field in page.entries[0]!, `listed entries have ${field}`);
  });

  test('page=2 holds the rest; a page past the end is empty with the true totals', async () => {
    const second = await api.list('?page=2');
    assert.equal(second.page, 2);
    assert.deepEqual(
      second.entries.map((entry) => entry.id),
      ids.slice(100),
    );
    const third = await api.list('?page=3');
    assert.deepEqual(third.entries, []);
    assert.equal(third.totalEntries, 104);
    assert.equal(third.totalPages, 2);
  });

  test('the folder filter matches the exact folder only, "" being the root', async () => {
    const bulk = await api.list('?folder=bulk');
    assert.equal(bulk.totalEntries, 101);
    assert.equal(bulk.totalPages, 2);
    assert.ok(bulk.entries.every((entry) => entry.folder === 'bulk'));
    const scripts = await api.list('?folder=bulk%2Fscripts');
    assert.deepEqual(
      scripts.entries.map((entry) => entry.name),
      ['timer.js'],
    );
    const root = await api.list('?folder=');
    assert.deepEqual(
      root.entries.map((entry) => entry.name),
      ['terms.txt'],
    );
    const several = await api.list('?folder.in=styles,bulk/scripts');
    assert.deepEqual(several.entries.map((entry) => entry.name).sort(), ['theme.css', 'timer.js']);
  });

  test('type flag filters take t and f and combine with others by AND', async () => {
    assert.equal((await api.list('?image=t')).totalEntries, 101);
    assert.deepEqual(
      (await api.list('?script=t')).entries.map((entry) => entry.name),
      ['timer.js'],
    );
    assert.deepEqual(
      (await api.list('?style=true')).entries.map((entry) => entry.name),
      ['theme.css'],
    );
    assert.deepEqual(
      (await api.list('?text=t')).entries.map((entry) => entry.name),
      ['terms.txt'],
    );
    assert.equal((await api.list('?image=f')).totalEntries, 3);
    const none = await api.list('?video=t');
    assert.deepEqual([none.totalEntries, none.totalPages, none.entries.length], [0, 0, 0]);
    assert.deepEqual(
      (await api.list('?folder=bulk/scripts&async=t')).entries.map((entry) => entry.name),
      ['timer.js'],
    );
    assert.equal((await api.list('?folder=bulk&async=t')).totalEntries, 0);
    assert.equal((await api.list('?image=t&page=2')).entries.length, 1);
  });

  test('name and id filters select single assets', async () => {
    assert.deepEqual(
      (await api.list('?name=banner-042.png')).entries.map((entry) => entry.id),
      [ids[42]],
    );
    assert.deepEqual(
      (await api.list(`?id.gt=${ids[101]}`)).entries.map((entry) => entry.id),
      ids.slice(102),
    );
    assert.equal((await api.list('?url.in=https://cdn.example.com/banner-000.png,https://cdn.example.com/banner-001.png')).totalEntries, 2);
  });

  test('unknown parameters, modifiers on booleans and bad pages are 400s naming the parameter', async () => {
    const cases: [string, RegExp][] = [
      ['?colour=red', /colour/],
      ['?image.in=t', /image/],
      ['?folder.like=bulk', /folder\.like/],
      ['?image=yes', /image/],
      ['?width=wide', /width/],
      ['?page=0', /page/],
      ['?page=x', /page/],
      ['?folder=a&folder=b', /folder/],
      ['?folder=%00', /folder/],
      ['?name.in=a.png,b%00.png', /name\.in/],
    ];
    for (const [query, pattern] of cases) assertRefused(await api.get(`/api/v1/assets${query}`), 400, pattern);
  });
});

describeEachEngine('assets API: listed entries', (engine) => {
  let ctx: TestContext;
  let api: Client;
  before(async () => {
    ctx = await startTestApp(engine);
    api = client(ctx, (await accountWithKey(ctx.accounts, 'entries')).key);
  });
  after(() => ctx.close());

  test('a listed entry is the entry read alone: same fields, values and order, for local and remote assets', async () => {
    const folder = 'shop/ünï';
    const ids = [
      await api.created({ file: { bytes: png(4, 3), filename: 'hero.png' }, folder }),
      await api.created({ name: 'remote.jpg', url: 'https://cdn.example.com/a%20b.jpg?v="1"', width: '640', height: '480', folder }),
      await api.created({ name: 'remote.css', url: 'https://cdn.example.com/theme.css', folder }),
      await api.created({ name: 'timer.js', content: 'void 0;', folder, async: 't', defer: 't' }),
      await api.created({ name: 'Ünïcødé "quoted" \\ back ☕ 𝄞.txt', content: 'x', folder }),
    ];
    assertTrue(await api.update(ids[3]!, { name: 'renamed.js' }));
    assertTrue(await api.update(ids[3]!, { defer: 'f' }));
    const page = await api.list(`?folder=${encodeURIComponent(folder)}`);
    assert.deepEqual(
      page.entries.map((entry) => entry.id),
      ids,
    );
    for (const [index, listed] of page.entries.entries()) {
      const alone = await api.entry(ids[index]!);
      assert.deepEqual(listed, alone);
      assert.deepEqual(Object.keys(listed), Object.keys(alone), "in the schema's order");
    }
    assert.equal(page.entries[3]!.name, 'renamed.js', 'an update shows in the list at once');
    assert.equal(page.entries[0]!.public_url, (await api.entry(ids[0]!)).public_url);
    assert.match(String(page.entries[0]!.public_url), /\/public\/[^/]+\/[^/]+$/);
  });
});

describeEachEngine('assets API: one account never sees or touches another', (engine) => {
  let ctx: TestContext;
  let owner: Client;
  let stranger: Client;
  let strangerKey: string;
  let ownerId: number;
  let ownerRemoteId: number;
  before(async () => {
    ctx = await startTestApp(engine);
    owner = client(ctx, (await accountWithKey(ctx.accounts, 'owner')).key);
    strangerKey = (await accountWithKey(ctx.accounts, 'stranger')).key;
    stranger = client(ctx, strangerKey);
    ownerId = await owner.created({ name: 'private.txt', content: 'owner only', folder: 'secret' });
    ownerRemoteId = await owner.created({ name: 'private.png', url: 'https://example.com/private.png', folder: 'secret' });
    await stranger.created({ name: 'mine.txt', content: 'stranger' });
  });
  after(() => ctx.close());

  /** The same request for an id that never existed: another account's id must answer exactly like it. */
  const missingId = 987654321;
  const sameAsMissing = async (send: (id: number) => Promise<LightMyRequestResponse>, id: number, status: number): Promise<void> => {
    const theirs = await send(id);
    const missing = await send(missingId);
    assertRefused(theirs, status);
    assertRefused(missing, status);
    const masked = (body: string, value: number) => body.replace(new RegExp(`\\b${value}\\b`, 'g'), '<id>');
    assert.equal(masked(theirs.body, id), masked(missing.body, missingId), 'indistinguishable from an id that does not exist');
  };

  test("GET of another account's asset is a 404, like an id that does not exist", async () => {
    await sameAsMissing((id) => stranger.get(`/api/v1/assets/${id}`), ownerId, 404);
  });

  test("content of another account's local or remote asset is a 404, never its bytes or its url", async () => {
    await sameAsMissing((id) => stranger.get(`/api/v1/assets/${id}/content`), ownerId, 404);
    const remote = await stranger.get(`/api/v1/assets/${ownerRemoteId}/content`);
    assertRefused(remote, 404);
    assert.equal(remote.headers.location, undefined);
  });

  test("PUT of another account's asset is a 400 like an unknown id, and changes nothing", async () => {
    const before = await owner.entry(ownerId);
    await sameAsMissing((id) => stranger.update(id, { name: 'stolen.txt' }), ownerId, 400);
    await sameAsMissing((id) => stranger.update(id, { content: 'overwritten' }), ownerId, 400);
    await sameAsMissing((id) => stranger.update(id, { url: 'https://evil.example.com/' }), ownerId, 400);
    assert.deepEqual(await owner.entry(ownerId), before);
    assert.equal((await owner.get(`/api/v1/assets/${ownerId}/content`)).body, 'owner only');
    await assertNoStrayBytes(ctx);
  });

  test("PATCH, which is no route, is a 404 for another account's id exactly as for a missing one", async () => {
    const patch = (id: number) =>
      ctx.app.inject({ method: 'PATCH', url: `/api/v1/assets/${id}`, headers: { 'x-api-key': strangerKey }, payload: form({ name: 'p.txt' }) });
    await sameAsMissing(patch, ownerId, 404);
    assert.equal((await owner.entry(ownerId)).name, 'private.txt');
  });

  test("DELETE of another account's asset is a 400 like an unknown id, and the asset stays", async () => {
    await sameAsMissing((id) => stranger.remove(id), ownerId, 400);
    await sameAsMissing((id) => stranger.remove(id), ownerRemoteId, 400);
    assert.equal((await owner.entry(ownerId)).name, 'private.txt');
    assert.equal((await owner.get(`/api/v1/assets/${ownerId}/content`)).body, 'owner only');
    assert.equal((await owner.entry(ownerRemoteId)).name, 'private.png');
  });

  test("the listing shows only the account's own assets, whatever the filter", async () => {
    const strangers = await stranger.list();
    assert.deepEqual(
      strangers.entries.map((entry) => entry.name),
      ['mine.txt'],
    );
    assert.equal(strangers.totalEntries, 1);
    assert.equal((await stranger.list(`?id=${ownerId}`)).totalEntries, 0);
    assert.equal((await stranger.list('?folder=secret')).totalEntries, 0);
    assert.equal((await owner.list()).totalEntries, 2);
  });

  test("another account's folder does not exist for a move, and its names do not clash", async () => {
    const mine = await stranger.created({ name: 'wanderer.txt', content: 'x' });
    assertRefused(await stranger.update(mine, { folder: 'secret' }), 400, /secret/);
    const twin = await stranger.created({ name: 'private.txt', content: 'stranger twin', folder: 'secret' });
    assert.equal((await stranger.entry(twin)).folder, 'secret');
    assert.equal((await owner.get(`/api/v1/assets/${ownerId}/content`)).body, 'owner only');
  });

  test('without a valid key nothing is read or written', async () => {
    const noKey = await ctx.app.inject({ method: 'GET', url: `/api/v1/assets/${ownerId}` });
    assertRefused(noKey, 401);
    const badKey = await ctx.app.inject({ method: 'DELETE', url: `/api/v1/assets/${ownerId}`, headers: { 'x-api-key': 'acds_not-a-real-key-at-all-000000' } });
    assertRefused(badKey, 401);
    const create = await ctx.app.inject({ method: 'POST', url: '/api/v1/assets', payload: form({ name: 'anon.txt', content: 'x' }) });
    assertRefused(create, 401);
    assert.equal((await owner.list()).totalEntries, 2);
  });
});
