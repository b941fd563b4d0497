import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { AssetService } from '../../src/assets/service.js';
import type { BlobStore } from '../../src/storage/blob-store.js';
import { S3BlobStore } from '../../src/storage/s3-blob-store.js';
import { describeEachEngine, freshDatabase, type TestDatabase } from '../helpers/database.js';
import { SERVICE_KEY, spawnService, stopService, type ServiceProcess } from '../helpers/processes.js';
import { startS3Server } from '../helpers/s3.js';

/**
 * The service as a real child process, killed with SIGKILL in the middle of writes and started
 * again on the same data: what was acknowledged is whole, nothing is half-made, no bytes are
 * left that no asset uses (docs/api.md, "Durability").
 */

const MiB = 1024 * 1024;

const BOUNDARY = 'durability-test-boundary';

/**
 * Starts a multipart upload of `size` bytes (or a text-only form when `size` is undefined) and
 * resolves with the request and a promise of its answer. Bytes are produced as the socket takes
 * them, so an upload of hundreds of MiB never sits in the test's memory either.
 */
function upload(
  service: ServiceProcess,
  method: 'POST' | 'PUT' | 'DELETE',
  pathname: string,
  fields: Record<string, string>,
  file?: { size: number; fill: number; pauseAfter?: number },
) {
  const hasBody = Object.keys(fields).length > 0 || file !== undefined;
  const request = http.request(`${service.baseUrl}${pathname}`, {
    method,
    headers: { 'x-api-key': SERVICE_KEY, ...(hasBody && { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }) },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
  answer.catch(() => {}); // a killed service resets the connection; callers that care await it
  let sent = 0;
  const sentHalf = (async () => {
    for (const [name, value] of Object.entries(fields)) {
      request.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
    }
    if (file) {
      request.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
      const chunk = Buffer.alloc(MiB, file.fill);
      while (sent < file.size) {
        const piece = chunk.subarray(0, Math.min(MiB, file.size - sent));
        sent += piece.length;
        if (!request.write(piece)) await once(request, 'drain');
        if (file.pauseAfter !== undefined && sent >= file.pauseAfter) return; // left hanging on purpose
      }
      request.write('\r\n');
    }
    if (hasBody) request.write(`--${BOUNDARY}--\r\n`);
    request.end();
  })();
  sentHalf.catch(() => {});
  return { request, answer, sentHalf, sent: () => sent };
}

async function createFromContent(service: ServiceProcess, name: string, content: string): Promise<number> {
  const { answer } = upload(service, 'POST', '/api/v1/assets', { name, content });
  const { status, body } = await answer;
  assert.equal(status, 200, body);
  return Number(JSON.parse(body).id);
}

async function download(service: ServiceProcess, id: number): Promise<Buffer> {
  const response = await fetch(`${service.baseUrl}/api/v1/assets/${id}/content`, { headers: { 'x-api-key': SERVICE_KEY } });
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
}

function filesUnder(folder: string): string[] {
  if (!fs.existsSync(folder)) return [];
  return fs
    .readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/**
 * Where a spawned service keeps its bytes, as the test sees them: files under its DATA_DIR (the
 * default, one instance), or an S3 bucket (the scaled-out set-up, tried on PostgreSQL).
 */
interface Storage {
  env: Record<string, string>;
  /** Every key that holds bytes. */
  keys(): Promise<string[]>;
  /** Resolves once an upload in flight has bytes in the store's hands. */
  uploadUnderway(): Promise<void>;
  /**
   * Whether the service sweeps at start. A bucket may be shared by instances uploading right now,
   * so there the service sweeps only old entries, and the test sweeps as a later sweep would.
   */
  sweepsAtStart: boolean;
  store?: BlobStore;
  close(): Promise<void>;
}

async function localStorage(database: TestDatabase): Promise<Storage> {
  const blobsDir = path.join(database.dataDir, 'blobs');
  const tmp = path.join(database.dataDir, 'tmp');
  return {
    env: {},
    keys: async () => {
      assert.deepEqual(filesUnder(tmp), [], 'no temporary upload files remain');
      return filesUnder(blobsDir).map((file) => path.relative(blobsDir, file));
    },
    uploadUnderway: () => until(() => filesUnder(tmp).some((file) => fs.statSync(file).size > 0)),
    sweepsAtStart: true,
    close: async () => {},
  };
}

async function s3Storage(database: TestDatabase): Promise<Storage> {
  const server = await startS3Server();
  const { options } = server;
  const client = new S3Client({
    endpoint: options.endpoint,
    region: options.region,
    forcePathStyle: true,
    credentials: { accessKeyId: options.accessKeyId!, secretAccessKey: options.secretAccessKey! },
  });
  return {
    env: {
      S3_BUCKET: options.bucket,
      S3_ENDPOINT: options.endpoint!,
      S3_ACCESS_KEY_ID: options.accessKeyId!,
      S3_SECRET_ACCESS_KEY: options.secretAccessKey!,
      S3_FORCE_PATH_STYLE: 'true',
    },
    keys: async () => {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: options.bucket }));
      return (listed.Contents ?? []).map((object) => object.Key!);
    },
    // A journal entry is written before the first byte; then give the first part time to go up.
    uploadUnderway: async () => {
      await until(async () => (await database.db.selectFrom('blob_journal').select('blob_key').execute()).length > 0);
      await sleep(300);
    },
    sweepsAtStart: false,
    store: new S3BlobStore(options),
    close: async () => {
      client.destroy();
      await server.close();
    },
  };
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await condition()) return;
    await sleep(25);
  }
  throw new Error('the upload never reached the blob store');
}

/**
 * After a restart: every row's bytes are there, whole; bytes no row uses are on the journal (so a
 * sweep will find them); after the sweep the store holds exactly the bytes rows use and the journal is empty.
 */
async function assertConsistent(database: TestDatabase, storage: Storage): Promise<void> {
  const rows = await database.db.selectFrom('assets').select(['id', 'blob_key', 'size']).execute();
  const used = rows.flatMap((row) => (row.blob_key ? [row.blob_key] : [])).sort();
  const stored = (await storage.keys()).sort();
  for (const row of rows.filter((r) => r.blob_key)) {
    assert.ok(stored.includes(row.blob_key!), `asset ${row.id} has its bytes`);
  }
  if (!storage.sweepsAtStart) {
    const journalled = (await database.db.selectFrom('blob_journal').select('blob_key').execute()).map((row) => row.blob_key);
    const untracked = stored.filter((key) => !used.includes(key) && !journalled.includes(key));
    assert.deepEqual(untracked, [], 'every byte no asset uses is on the journal');
    await new AssetService(database, storage.store!).sweepOrphanedBlobs(0);
  }
  assert.deepEqual((await storage.keys()).sort(), used, 'the store holds exactly the bytes the assets use');
  assert.deepEqual(await database.db.selectFrom('blob_journal').selectAll().execute(), [], 'the journal is empty after the sweep');
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// On SQLite the bytes are on local disk, as by default; on PostgreSQL they are in S3, as when scaled out.
describeEachEngine('assets survive the service being killed mid-write', (engine) => {
  let database: TestDatabase;
  let storage: Storage;
  let service: ServiceProcess;
  const restart = () => spawnService(database, storage.env);
  before(async () => {
    database = await freshDatabase(engine);
    storage = engine === 'sqlite' ? await localStorage(database) : await s3Storage(database);
    service = await restart();
  });
  after(async () => {
    await stopService(service);
    await storage.close();
    await database.close();
  });

  test('a kill during an upload leaves no asset, no bytes, and the acknowledged assets intact', async () => {
    const keptId = await createFromContent(service, 'kept.txt', 'acknowledged before the crash');
    const inFlight = upload(service, 'POST', '/api/v1/assets', { name: 'half.bin' }, { size: 64 * MiB, fill: 1, pauseAfter: 8 * MiB });
    await inFlight.sentHalf;
    await storage.uploadUnderway();
    await stopService(service);

    service = await restart();
    await assertConsistent(database, storage);
    const names = (await database.db.selectFrom('assets').select('name').execute()).map((row) => row.name);
    assert.deepEqual(names, ['kept.txt']);
    assert.equal((await download(service, keptId)).toString(), 'acknowledged before the crash');
  });

  test('a kill during a replacement leaves the old bytes whole', async () => {
    const id = await createFromContent(service, 'replaced.txt', 'the old bytes');
    const inFlight = upload(service, 'PUT', `/api/v1/assets/${id}`, {}, { size: 64 * MiB, fill: 2, pauseAfter: 8 * MiB });
    await inFlight.sentHalf;
    await storage.uploadUnderway();
    await stopService(service);

    service = await restart();
    await assertConsistent(database, storage);
    assert.equal((await download(service, id)).toString(), 'the old bytes');
  });

  // The moments between the last byte and the answer (put, rename, commit, old bytes' delete) are
  // too short to aim at, so each write is killed at a spread of delays after it was sent.
  for (const delayMs of [0, 3, 10, 30, 100]) {
    test(`a replacement and a delete killed ${delayMs} ms after sending leave each asset old or new, whole`, async () => {
      const oldBytes = 'version one';
      const replacedId = await createFromContent(service, `r-${delayMs}.txt`, oldBytes);
      const deletedId = await createFromContent(service, `d-${delayMs}.txt`, 'to be deleted');
      const newBytes = Buffer.alloc(2 * MiB, 3);
      const replacement = upload(service, 'PUT', `/api/v1/assets/${replacedId}`, {}, { size: newBytes.length, fill: 3 });
      const deletion = upload(service, 'DELETE', `/api/v1/assets/${deletedId}`, {});
      await replacement.sentHalf;
      await sleep(delayMs);
      const acknowledged = await Promise.race([
        Promise.all([replacement.answer, deletion.answer]).then((answers) => answers.map((a) => a.status === 200)),
        sleep(0).then(() => [false, false]),
      ]);
      await stopService(service);

      service = await restart();
      await assertConsistent(database, storage);
      const current = await database.db.selectFrom('assets').select('id').where('id', 'in', [replacedId, deletedId]).execute();
      const bytes = await download(service, replacedId);
      assert.ok(sha(bytes) === sha(newBytes) || bytes.toString() === oldBytes, 'the replaced asset is wholly old or wholly new');
      if (acknowledged[0]) assert.equal(sha(bytes), sha(newBytes), 'an acknowledged replacement is kept');
      if (acknowledged[1]) assert.ok(!current.some((row) => row.id === deletedId), 'an acknowledged delete is kept');
    });
  }
});

describeEachEngine('a large upload streams through the service', (engine) => {
  if (engine !== 'sqlite') return; // the bytes never touch the database; one engine proves the bound
  let database: TestDatabase;
  let service: ServiceProcess;
  before(async () => {
    database = await freshDatabase(engine);
    service = await spawnService(database, { MAX_UPLOAD_BYTES: String(1024 * MiB) });
  });
  after(async () => {
    await stopService(service);
    await database.close();
  });

  test('memory stays within 64 MiB of its resting size while 300 MiB are uploaded', async () => {
    await createFromContent(service, 'warm-up.txt', randomBytes(1024).toString('hex'));
    // At rest means started: the columnar index's thread answers once it is open.
    const listed = await fetch(`${service.baseUrl}/api/v1/conversions`, { headers: { 'x-api-key': SERVICE_KEY } });
    assert.equal(listed.status, 200);
    const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${service.child.pid}/status`, 'utf8'))![1]) * 1024;
    const resting = rss();
    let peak = resting;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);
    try {
      const size = 300 * MiB;
      const { answer } = upload(service, 'POST', '/api/v1/assets', { name: 'large.bin' }, { size, fill: 7 });
      const { status, body } = await answer;
      assert.equal(status, 200, body);
      const row = await database.db
        .selectFrom('assets')
        .select('size')
        .where('id', '=', Number(JSON.parse(body).id))
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.size), size);
    } finally {
      clearInterval(sampler);
    }
    const growth = peak - resting;
    assert.ok(growth < 64 * MiB, `memory grew by ${(growth / MiB).toFixed(1)} MiB`);
  });
});
