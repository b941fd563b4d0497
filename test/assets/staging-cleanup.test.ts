import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FileBlobStore } from '../../src/storage/file-blob-store.js';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { tempDir } from '../helpers/database.js';

/**
 * A refused upload leaves no temporary file behind, however slowly the file system answers.
 *
 * A put streams into a temporary that fs.createWriteStream opens on the thread pool. When the
 * upload fails before that open has finished (a file over the limit, a body cut short), the
 * stream pipeline rejects at once, while the open is still under way: a put that removed its
 * temporary then removed nothing, and the open created the file a moment later, left for ever
 * (and seen by the next test as a stray `tmp:<hex>.part`). On a loaded machine the open is slow
 * enough for this to happen now and then; here every open of a temporary is made slow, so that
 * it happens every time.
 */

/** How long each open of a temporary file waits before it is made. */
const SLOW_OPEN_MS = 40;

/** Delays fs.open (which fs.createWriteStream uses) of files under `dir`; returns what undoes it. */
function slowOpensUnder(dir: string): () => void {
  const open = fs.open;
  fs.open = function slowOpen(this: unknown, file: fs.PathLike, ...rest: unknown[]) {
    const call = () => (open as (...args: unknown[]) => void).call(fs, file, ...rest);
    if (String(file).startsWith(dir + path.sep)) setTimeout(call, SLOW_OPEN_MS);
    else call();
  } as typeof fs.open;
  return () => {
    fs.open = open;
  };
}

/** Each test starts from an empty tmp folder, whatever an earlier one left there. */
function emptyFolder(dir: string): void {
  for (const name of fs.readdirSync(dir)) fs.rmSync(path.join(dir, name), { force: true });
}

/** The temporary files left in the store's tmp folder, once every slow open has had time to finish. */
async function leftTemporaries(tmp: string): Promise<{ atOnce: string[]; later: string[] }> {
  const atOnce = fs.readdirSync(tmp);
  await sleep(SLOW_OPEN_MS * 4);
  return { atOnce, later: fs.readdirSync(tmp) };
}

describe('a failed put of the file store, while opening its temporary is slow', () => {
  let dir: string;
  let store: FileBlobStore;
  let restore: () => void;
  before(() => {
    dir = tempDir();
    store = new FileBlobStore(dir);
  });
  beforeEach(() => {
    emptyFolder(path.join(dir, 'tmp'));
    restore = slowOpensUnder(path.join(dir, 'tmp'));
  });
  afterEach(() => restore());
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('settles only once its temporary is removed: none is left then or later', async () => {
    const failing = new Readable({
      read() {
        this.destroy(new Error('the client went away'));
      },
    });
    await assert.rejects(store.put('1/failed', failing), /the client went away/);
    assert.deepEqual(await leftTemporaries(path.join(dir, 'tmp')), { atOnce: [], later: [] });
    assert.equal(await store.stat('1/failed'), undefined);
  });

  test('a source that failed before the put began leaves no temporary either', async () => {
    const failed = new Readable({ read() {} });
    failed.on('error', () => {});
    failed.destroy(new Error('already failed'));
    await assert.rejects(store.put('1/failed-before', failed), /already failed/);
    assert.deepEqual(await leftTemporaries(path.join(dir, 'tmp')), { atOnce: [], later: [] });
  });

  test('a put that succeeds still stores the whole stream and leaves no temporary', async () => {
    await store.put('1/whole', Readable.from([Buffer.from('all '), Buffer.from('of it')]));
    assert.equal(fs.readFileSync(path.join(dir, 'blobs', '1', 'whole'), 'utf8'), 'all of it');
    assert.deepEqual(await leftTemporaries(path.join(dir, 'tmp')), { atOnce: [], later: [] });
  });
});

describe('a refused upload, while opening temporaries is slow, is answered only once its bytes are removed [sqlite]', () => {
  const LIMIT = 1024;
  let ctx: TestContext;
  let key: string;
  let tmp: string;
  let restore: () => void;
  before(async () => {
    ctx = await startTestApp('sqlite', { maxUploadBytes: LIMIT });
    key = (await accountWithKey(ctx.accounts, 'slow-disk')).key;
    tmp = path.join(ctx.database.dataDir, 'tmp');
  });
  beforeEach(() => {
    emptyFolder(tmp);
    restore = slowOpensUnder(tmp);
  });
  afterEach(() => restore());
  after(() => ctx.close());

  const post = (payload: FormData | string, contentType?: string) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: { 'x-api-key': key, ...(contentType ? { 'content-type': contentType } : {}) },
      payload,
    });

  async function assertNothingKept(): Promise<void> {
    assert.deepEqual(await leftTemporaries(tmp), { atOnce: [], later: [] }, 'no temporary file is left, at the answer or after it');
    assert.deepEqual(fs.readdirSync(path.join(ctx.database.dataDir, 'blobs')), []);
    assert.deepEqual(await ctx.database.db.selectFrom('assets').select('id').execute(), []);
    assert.deepEqual(await ctx.database.db.selectFrom('blob_journal').select('blob_key').execute(), []);
  }

  test('a file one byte over the limit', async () => {
    const data = new FormData();
    data.append('name', 'big.bin');
    data.append('file', new Blob([new Uint8Array(LIMIT + 1).fill(7)], { type: 'application/octet-stream' }), 'big.bin');
    const response = await post(data);
    assert.equal(response.statusCode, 400, response.body);
    await assertNothingKept();
  });

  test('a file far over the limit, with fields after it', async () => {
    const data = new FormData();
    data.append('file', new Blob([new Uint8Array(LIMIT * 8).fill(1)], { type: 'application/octet-stream' }), 'bigger.bin');
    data.append('name', 'bigger.bin');
    const response = await post(data);
    assert.equal(response.statusCode, 400, response.body);
    await assertNothingKept();
  });

  test('a whole request whose multipart body ends inside the file part', async () => {
    const boundary = 'slow-disk-boundary';
    const body =
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\ncut.txt\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\npartial by`;
    const response = await post(body, `multipart/form-data; boundary=${boundary}`);
    assert.equal(response.statusCode, 400, response.body);
    await assertNothingKept();
  });

  test('a file within the limit is still stored, and no temporary is left', async () => {
    const data = new FormData();
    data.append('file', new Blob([new Uint8Array(LIMIT).fill(3)], { type: 'application/octet-stream' }), 'exact.bin');
    const response = await post(data);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(await leftTemporaries(tmp), { atOnce: [], later: [] });
  });
});
