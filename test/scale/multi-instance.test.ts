import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { freshDatabase, tempDir, type TestDatabase } from '../helpers/database.js';
import { SERVICE_KEY, spawnService, stopService, type ServiceProcess } from '../helpers/processes.js';
import { startS3Server, type TestS3Server } from '../helpers/s3.js';

/**
 * Two service processes on two ports sharing PostgreSQL, Redis and an S3 server, as in
 * docs/deployment.md. Needs TEST_DATABASE_URL and TEST_REDIS_URL, which .ci/run sets.
 */
const REDIS_URL = process.env.TEST_REDIS_URL;
const ready = process.env.TEST_DATABASE_URL && REDIS_URL;
const randomIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

describe('two instances behind one load balancer', { skip: ready ? false : 'needs TEST_DATABASE_URL and TEST_REDIS_URL' }, () => {
  let database: TestDatabase;
  let s3: TestS3Server;
  const instances: ServiceProcess[] = [];
  const dataDirs: string[] = [];

  before(async () => {
    database = await freshDatabase('postgres');
    s3 = await startS3Server();
    for (let i = 0; i < 2; i++) {
      const dataDir = tempDir();
      dataDirs.push(dataDir);
      instances.push(
        await spawnService(
          { dataDir, databaseUrl: database.databaseUrl },
          {
            REDIS_URL: REDIS_URL!,
            RATE_LIMIT_PER_MINUTE: '60',
            // The test plays the proxy: each scenario comes from a client address of its own.
            TRUST_PROXY: '127.0.0.1',
            S3_BUCKET: s3.options.bucket,
            S3_ENDPOINT: s3.options.endpoint!,
            S3_REGION: s3.options.region,
            S3_ACCESS_KEY_ID: s3.options.accessKeyId!,
            S3_SECRET_ACCESS_KEY: s3.options.secretAccessKey!,
            S3_FORCE_PATH_STYLE: 'true',
          },
        ),
      );
    }
  });
  after(async () => {
    for (const instance of instances) await stopService(instance);
    await s3?.close();
    await database?.close();
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  const call = (instance: ServiceProcess, path: string, init: RequestInit = {}, clientIp = randomIp()) =>
    fetch(`${instance.baseUrl}${path}`, {
      ...init,
      headers: { 'x-api-key': SERVICE_KEY, 'x-forwarded-for': clientIp, ...(init.headers as Record<string, string>) },
    });

  const createAsset = async (instance: ServiceProcess, name: string, content: string) => {
    const form = new FormData();
    form.set('name', name);
    form.set('file', new Blob([content]), name);
    const response = await call(instance, '/api/v1/assets', { method: 'POST', body: form });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()).id as string;
  };

  test('an asset uploaded through one instance is listed and downloaded through the other', async () => {
    const [a, b] = instances as [ServiceProcess, ServiceProcess];
    const content = 'shared through S3 '.repeat(1000);
    const id = await createAsset(a, 'shared.txt', content);

    const listed = await (await call(b, '/api/v1/assets?name=shared.txt')).json();
    assert.deepEqual(
      listed.entries.map((entry: { id: number }) => entry.id),
      [Number(id)],
    );
    const download = await call(b, `/api/v1/assets/${id}/content`);
    assert.equal(download.status, 200);
    assert.equal(await download.text(), content);
    const range = await call(b, `/api/v1/assets/${id}/content`, { headers: { range: 'bytes=0-5' } });
    assert.equal(range.status, 206);
    assert.equal(await range.text(), 'shared');
    const ready = await (await fetch(`${b.baseUrl}/readyz`)).json();
    assert.deepEqual(ready, { status: 'ready', checks: { database: 'ok', blobStore: 'ok', redis: 'ok', conversionIndex: 'ok' } });
  });

  test('requests from one IP alternating between the instances get their 61st answered with 429', async () => {
    const ip = randomIp();
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) statuses.push((await call(instances[i % 2]!, '/api/v1/conversions', {}, ip)).status);
    assert.deepEqual(statuses.slice(0, 60), Array(60).fill(200));
    assert.equal(statuses[60], 429);
  });

  test('one instance killed in the middle of traffic: the other keeps serving and nothing acknowledged is lost', async () => {
    const [a, b] = instances as [ServiceProcess, ServiceProcess];
    const acknowledged = new Map<string, string>();
    let sent = 0;
    let killed = false;
    const writer = async (instance: ServiceProcess) => {
      for (let i = 0; i < 40; i++) {
        const name = `traffic-${sent++}.txt`;
        const content = `bytes of ${name}`;
        try {
          acknowledged.set(await createAsset(instance, name, content), content);
        } catch (error) {
          // Only requests to the killed instance may fail, and only once it is killed.
          assert.ok(instance === a && killed, `a request to the surviving instance failed: ${error}`);
        }
      }
    };
    const traffic = Promise.all([writer(a), writer(b), writer(b)]);
    while (acknowledged.size < 10) await new Promise((resolve) => setTimeout(resolve, 10));
    killed = true;
    await stopService(a);
    await traffic;

    assert.ok(acknowledged.size >= 80, `the survivor acknowledged its writes (${acknowledged.size} in all)`);
    for (const [id, content] of acknowledged) {
      const download = await call(b, `/api/v1/assets/${id}/content`);
      assert.equal(download.status, 200, `acknowledged asset ${id} is there`);
      assert.equal(await download.text(), content);
    }
  });
});
