import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import type { BlobStore } from '../../src/storage/blob-store.js';
import { FileBlobStore } from '../../src/storage/file-blob-store.js';
import { S3BlobStore } from '../../src/storage/s3-blob-store.js';
import { tempDir } from '../helpers/database.js';
import { startS3Server, type TestS3Server } from '../helpers/s3.js';

/** One contract, every implementation: the same tests run on the file system and on S3. */
const stores: { name: string; open(): Promise<{ store: BlobStore; close(): Promise<void> }> }[] = [
  {
    name: 'file system',
    async open() {
      const dir = tempDir();
      const store = new FileBlobStore(dir);
      return { store, close: async () => fs.rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'S3 (s3rver)',
    async open() {
      const server: TestS3Server = await startS3Server();
      const store = new S3BlobStore(server.options);
      return {
        store,
        close: async () => {
          await store.close();
          await server.close();
        },
      };
    },
  },
];

for (const { name, open } of stores) {
  describe(`blob store: ${name}`, () => {
    let store: BlobStore;
    let close: () => Promise<void>;
    before(async () => ({ store, close } = await open()));
    after(() => close());

    test('a put stream reads back whole, and a range reads back exactly those bytes', async () => {
      const bytes = randomBytes(3 * 1024 * 1024 + 17);
      await store.put('1/whole', Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]));
      assert.deepEqual(await buffer((await store.read('1/whole'))!), bytes);
      assert.deepEqual(await buffer((await store.read('1/whole', { start: 5, end: 9 }))!), bytes.subarray(5, 10));
      assert.deepEqual(await store.stat('1/whole'), { size: bytes.length });
    });

    test('a put larger than one multipart part arrives whole', async () => {
      const bytes = randomBytes(17 * 1024 * 1024);
      await store.put(
        '1/large',
        Readable.from(
          (function* () {
            for (let at = 0; at < bytes.length; at += 1024 * 1024) yield bytes.subarray(at, at + 1024 * 1024);
          })(),
        ),
      );
      const back = await buffer((await store.read('1/large'))!);
      assert.equal(back.length, bytes.length);
      assert.ok(back.equals(bytes));
    });

    test('a put whose source fails leaves nothing under the key', async () => {
      const failing = new Readable({
        read() {
          this.push(randomBytes(1024));
          this.destroy(new Error('client went away'));
        },
      });
      await assert.rejects(store.put('1/broken', failing));
      assert.equal(await store.stat('1/broken'), undefined);
    });

    test('delete removes the bytes, and deleting a missing key is not an error', async () => {
      await store.put('1/gone', Readable.from([Buffer.from('x')]));
      await store.delete('1/gone');
      assert.equal(await store.stat('1/gone'), undefined);
      assert.equal(await store.read('1/gone'), undefined, 'a read finds no bytes, without failing');
      await store.delete('1/never-there');
    });

    test('keys that could name anything outside the store are refused', async () => {
      for (const key of ['../escape', '1/../../x', '/abs', '1//x', 'a\0b', 'a%2fb']) {
        await assert.rejects(store.put(key, Readable.from([Buffer.from('x')])), /invalid blob key/, key);
        await assert.rejects(store.read(key), /invalid blob key/, key);
      }
    });

    test('check resolves while the store is reachable', async () => {
      await store.check();
    });
  });
}
