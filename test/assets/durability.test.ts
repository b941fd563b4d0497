import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { describeEachEngine, freshDatabase, SERVICE_KEY, spawnService, stopService, type ServiceProcess, type TestDatabase } from '../helper.js';

/**
 * The service as a real child process, killed with SIGKILL in the middle of writes and started
 * again on the same data: what was acknowledged is whole, nothing is half-made, no bytes are
 * left that no asset uses (decisions §8, issue 3).
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
  return fs.readdirSync(folder, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** After a restart: every row's bytes exist, no file is unused, no journal entry or temporary file remains. */
async function assertConsistent(database: TestDatabase): Promise<void> {
  const rows = await database.db.selectFrom('assets').select(['id', 'blob_key', 'size']).execute();
  const journal = await database.db.selectFrom('blob_journal').selectAll().execute();
  const blobsDir = path.join(database.dataDir, 'blobs');
  const onDisk = filesUnder(blobsDir).map((file) => path.relative(blobsDir, file)).sort();
  const used = rows.flatMap((row) => (row.blob_key ? [row.blob_key] : [])).sort();
  assert.deepEqual(onDisk, used, 'the blob files are exactly those the assets use');
  for (const row of rows.filter((r) => r.blob_key)) {
    assert.equal(fs.statSync(path.join(blobsDir, row.blob_key!)).size, Number(row.size), `asset ${row.id} has all its bytes`);
  }
  assert.deepEqual(journal, [], 'the journal is empty after the start-up sweep');
  assert.deepEqual(filesUnder(path.join(database.dataDir, 'tmp')), [], 'no temporary upload files remain');
}

async function waitForPartialFile(database: TestDatabase): Promise<void> {
  const tmp = path.join(database.dataDir, 'tmp');
  for (let i = 0; i < 200; i++) {
    if (filesUnder(tmp).some((file) => fs.statSync(file).size > 0)) return;
    await sleep(25);
  }
  throw new Error('the upload never reached the blob store');
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describeEachEngine('assets survive the service being killed mid-write', (engine) => {
  let database: TestDatabase;
  let service: ServiceProcess;
  before(async () => {
    database = await freshDatabase(engine);
    service = await spawnService(database);
  });
  after(async () => {
    await stopService(service);
    await database.close();
  });

  test('a kill during an upload leaves no asset, no bytes, and the acknowledged assets intact', async () => {
    const keptId = await createFromContent(service, 'kept.txt', 'acknowledged before the crash');
    const inFlight = upload(service, 'POST', '/api/v1/assets', { name: 'half.bin' }, { size: 64 * MiB, fill: 1, pauseAfter: 8 * MiB });
    await inFlight.sentHalf;
    await waitForPartialFile(database);
    await stopService(service);

    service = await spawnService(database);
    await assertConsistent(database);
    const names = (await database.db.selectFrom('assets').select('name').execute()).map((row) => row.name);
    assert.deepEqual(names, ['kept.txt']);
    assert.equal((await download(service, keptId)).toString(), 'acknowledged before the crash');
  });

  test('a kill during a replacement leaves the old bytes whole', async () => {
    const id = await createFromContent(service, 'replaced.txt', 'the old bytes');
    const inFlight = upload(service, 'PUT', `/api/v1/assets/${id}`, {}, { size: 64 * MiB, fill: 2, pauseAfter: 8 * MiB });
    await inFlight.sentHalf;
    await waitForPartialFile(database);
    await stopService(service);

    service = await spawnService(database);
    await assertConsistent(database);
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

      service = await spawnService(database);
      await assertConsistent(database);
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
    const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${service.child.pid}/status`, 'utf8'))![1]) * 1024;
    const resting = rss();
    let peak = resting;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);
    try {
      const size = 300 * MiB;
      const { answer } = upload(service, 'POST', '/api/v1/assets', { name: 'large.bin' }, { size, fill: 7 });
      const { status, body } = await answer;
      assert.equal(status, 200, body);
      const row = await database.db.selectFrom('assets').select('size').where('id', '=', Number(JSON.parse(body).id)).executeTakeFirstOrThrow();
      assert.equal(Number(row.size), size);
    } finally {
      clearInterval(sampler);
    }
    const growth = peak - resting;
    assert.ok(growth < 64 * MiB, `memory grew by ${(growth / MiB).toFixed(1)} MiB`);
  });
});
