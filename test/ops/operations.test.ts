import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine, freshDatabase, testConfig } from '../helpers/database.js';
import { SERVICE_KEY, spawnService, stopService } from '../helpers/processes.js';
import { holdWrites } from '../helpers/write-locks.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const randomIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

describeEachEngine('health, readiness and metrics', (engine) => {
  let ctx: TestContext;
  let key: string;
  before(async () => {
    ctx = await startTestApp(engine, { rateLimit: { max: 2, windowMs: 60_000 } });
    key = (await accountWithKey(ctx.accounts, 'ops')).key;
  });
  after(() => ctx.close());

  test('healthz and readyz answer without a key and are never rate limited', async () => {
    for (let i = 0; i < 5; i++) {
      const health = await ctx.app.inject({ url: '/healthz' });
      assert.equal(health.statusCode, 200);
      assert.deepEqual(health.json(), { status: 'alive' });
      const ready = await ctx.app.inject({ url: '/readyz' });
      assert.equal(ready.statusCode, 200);
      const redis = engine === 'postgres' && REDIS_URL ? 'ok' : 'not configured';
      assert.deepEqual(ready.json(), { status: 'ready', checks: { database: 'ok', blobStore: 'ok', redis, conversionIndex: 'ok' } });
    }
  });

  test('metrics count requests by route and status, and rate-limit rejections', async () => {
    const ip = randomIp();
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await ctx.app.inject({ url: '/api/v1/conversions', remoteAddress: ip, headers: { 'x-api-key': key } })).statusCode);
    }
    assert.deepEqual(statuses, [200, 200, 429]);
    const metrics = await ctx.app.inject({ url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.headers['content-type'] as string, /^text\/plain/);
    const text = metrics.body;
    assert.match(text, /acds_http_requests_total\{method="GET",route="\/api\/v1\/conversions",status="200"\} 2/);
    assert.match(text, /acds_http_requests_total\{method="GET",route="\/api\/v1\/conversions",status="429"\} 1/);
    assert.match(text, /acds_rate_limit_rejections_total 1/);
    // Every answered request lands in the histogram; which bucket depends on the host's speed.
    assert.match(text, /acds_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/api\/v1\/conversions",status="200"\} 2/);
    assert.match(text, /acds_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/conversions",status="200"\} 2/);
    if (engine === 'postgres') assert.match(text, /acds_db_pool_connections\{state="total"\} \d+/);
  });
});

describe('readiness when a dependency is down', () => {
  test('an unreachable blob store makes the instance unavailable (503)', async () => {
    const database = await freshDatabase('sqlite');
    const app = await buildApp({ config: testConfig(database), database });
    try {
      fs.rmSync(path.join(database.dataDir, 'blobs'), { recursive: true });
      const ready = await app.inject({ url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.deepEqual(ready.json(), {
        status: 'unavailable',
        checks: { database: 'ok', blobStore: 'unreachable', redis: 'not configured', conversionIndex: 'ok' },
      });
    } finally {
      await app.close();
      await database.close();
    }
  });

  test('with Redis unreachable the API keeps answering, unlimited, and readiness says degraded', async () => {
    const ctx = await startTestApp('sqlite', { redisUrl: 'redis://127.0.0.1:1', rateLimit: { max: 1, windowMs: 60_000 } });
    try {
      const { key } = await accountWithKey(ctx.accounts, 'no-redis');
      for (let i = 0; i < 3; i++) {
        const response = await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': key } });
        assert.equal(response.statusCode, 200, 'served although the limit of 1 could not be counted');
      }
      const ready = await ctx.app.inject({ url: '/readyz' });
      assert.equal(ready.statusCode, 200);
      assert.deepEqual(ready.json(), { status: 'degraded', checks: { database: 'ok', blobStore: 'ok', redis: 'unreachable', conversionIndex: 'ok' } });
    } finally {
      await ctx.close();
    }
  });
});

test('with Redis answering nothing (stalled, its connection open) the API answers at once, unlimited, and readiness says degraded', async () => {
  // Answers the client's handshake, then nothing more.
  let stalled = false;
  const sockets = new Set<net.Socket>();
  const fake = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (data) => {
      if (stalled) return;
      const body = '# Server\r\nloading:0\r\n';
      socket.write(/info/i.test(data.toString()) ? `$${body.length}\r\n${body}\r\n` : '+OK\r\n');
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const { port } = fake.address() as net.AddressInfo;
  const ctx = await startTestApp('sqlite', { redisUrl: `redis://127.0.0.1:${port}`, rateLimit: { max: 1, windowMs: 60_000 } });
  try {
    const { key } = await accountWithKey(ctx.accounts, 'stalled-redis');
    stalled = true;
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const response = await ctx.app.inject({ url: '/api/v1/assets', headers: { 'x-api-key': key } });
      assert.equal(response.statusCode, 200, 'served although the limit of 1 could not be counted');
      assert.ok(Date.now() - started < 5_000, `answered after ${Date.now() - started} ms`);
    }
    const ready = await ctx.app.inject({ url: '/readyz' });
    assert.equal(ready.json().checks.redis, 'unreachable');
  } finally {
    await ctx.close();
    for (const socket of sockets) socket.destroy();
    fake.close();
  }
});

describe('rate limit shared through Redis', { skip: REDIS_URL ? false : 'TEST_REDIS_URL is not set' }, () => {
  test('two instances on one Redis share one budget per IP: the 61st request gets 429', async () => {
    const shared = { redisNamespace: `acds-test:${randomIp()}:` };
    const first = await startTestApp('sqlite', { redisUrl: REDIS_URL, rateLimit: { max: 60, windowMs: 60_000 } }, shared);
    const second = await startTestApp('sqlite', { redisUrl: REDIS_URL, rateLimit: { max: 60, windowMs: 60_000 } }, shared);
    try {
      const ip = randomIp();
      const statuses: number[] = [];
      for (let i = 0; i < 61; i++) {
        const app = i % 2 === 0 ? first.app : second.app;
        statuses.push((await app.inject({ url: '/api/v1/unknown', remoteAddress: ip })).statusCode);
      }
      assert.deepEqual(statuses.slice(0, 60), Array(60).fill(401), 'unauthenticated requests count too');
      assert.equal(statuses[60], 429);
      const other = await second.app.inject({ url: '/api/v1/unknown', remoteAddress: randomIp() });
      assert.equal(other.statusCode, 401, 'another IP has its own budget');
      const ready = await first.app.inject({ url: '/readyz' });
      assert.equal(ready.json().checks.redis, 'ok');
    } finally {
      await first.close();
      await second.close();
    }
  });

  test('the window resets in Redis too', async () => {
    const ctx = await startTestApp('sqlite', { redisUrl: REDIS_URL, rateLimit: { max: 2, windowMs: 300 } });
    try {
      const ip = randomIp();
      const ask = async () => (await ctx.app.inject({ url: '/api/v1/unknown', remoteAddress: ip })).statusCode;
      assert.deepEqual([await ask(), await ask(), await ask()], [401, 401, 429]);
      await new Promise((resolve) => setTimeout(resolve, 350));
      assert.equal(await ask(), 401);
    } finally {
      await ctx.close();
    }
  });
});

describeEachEngine('starting beside another writer', (engine) => {
  test('the service starts again, and answers, while another writer of the account is in its transaction, with bytes to sweep', async () => {
    const database = await freshDatabase(engine);
    try {
      await stopService(await spawnService(database));
      // Journalled bytes of an interrupted upload: the start's sweep would write to remove them.
      await database.db.insertInto('blob_journal').values({ blob_key: 'interrupted/upload', created_at: 0 }).execute();
      const account = await database.db.selectFrom('accounts').select('id').where('name', '=', 'default').executeTakeFirstOrThrow();
      const endTransaction = await holdWrites(database, account.id);
      try {
        const service = await spawnService(database);
        try {
          const response = await fetch(`${service.baseUrl}/api/v1/conversions`, { headers: { 'x-api-key': SERVICE_KEY } });
          assert.equal(response.status, 200, await response.text());
        } finally {
          await stopService(service);
        }
      } finally {
        await endTransaction();
      }
    } finally {
      await database.close();
    }
  });
});

describe('graceful shutdown', () => {
  test('on SIGTERM a request in flight is answered, then the process exits 0', async () => {
    const database = await freshDatabase('sqlite');
    await database.close(); // only its folder is used
    fs.mkdirSync(database.dataDir, { recursive: true });
    const service = await spawnService(database);
    try {
      const boundary = 'shutdown-boundary';
      const body = new ReadableStream({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\n\r\n`));
          await new Promise((resolve) => setTimeout(resolve, 300));
          controller.enqueue(new TextEncoder().encode(`still arriving\r\n--${boundary}--\r\n`));
          controller.close();
        },
      });
      const inFlight = fetch(`${service.baseUrl}/api/v1/assets`, {
        method: 'POST',
        headers: { 'x-api-key': SERVICE_KEY, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
        duplex: 'half',
      } as RequestInit);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const exitCode = stopService(service, 'SIGTERM');
      const response = await inFlight;
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(await exitCode, 0);
      await assert.rejects(fetch(`${service.baseUrl}/healthz`), 'no new connections after the stop');
    } finally {
      await stopService(service);
      fs.rmSync(database.dataDir, { recursive: true, force: true });
    }
  });

  test('a request that arrives while the service shuts down is refused as every error is answered: a 503 with a JSON string and its request id', async () => {
    const ctx = await startTestApp('sqlite');
    const { key } = await accountWithKey(ctx.accounts, 'closing');
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as net.AddressInfo;
    const connect = () => {
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (data) => (received += data));
      socket.on('error', () => {});
      return { socket, received: () => received };
    };
    // An upload in flight holds the close open; a second request's headers are still arriving.
    const upload = connect();
    upload.socket.write(
      `POST /api/v1/assets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: multipart/form-data; boundary=zz\r\nContent-Length: 200\r\n\r\n--zz\r\n`,
    );
    const late = connect();
    late.socket.write(`GET /api/v1/assets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n`);
    await sleep(200);
    const closed = ctx.app.close();
    await sleep(100);
    late.socket.write('\r\n');
    for (let waited = 0; !late.received().includes('\r\n\r\n') && waited < 5_000; waited += 50) await sleep(50);
    const [head, body] = late.received().split('\r\n\r\n');
    upload.socket.destroy();
    late.socket.destroy();
    await closed;
    await ctx.close();
    assert.match(head!, /^HTTP\/1\.1 503 /);
    assert.match(head!, /^x-request-id: \S+/im);
    assert.match(head!, /^retry-after: 1/im);
    assert.match(JSON.parse(body!.slice(body!.indexOf('"'), body!.lastIndexOf('"') + 1)), /shutting down/);
  });
});
