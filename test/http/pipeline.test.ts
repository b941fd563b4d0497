import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { keyPrefix } from '../../src/accounts/keys.js';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine, freshDatabase, testConfig, type TestDatabase } from '../helpers/database.js';
import { conversionRecord, insertConversions } from '../helpers/fixtures.js';

/**
 * The request pipeline every /api/v1 request goes through: keys, the rate limit and errors, as
 * docs/api.md ("Authentication", "Rate limit", "Errors") has them.
 */

const JSON_TYPE = 'application/json; charset=utf-8';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function assertJsonString(response: LightMyRequestResponse, status: number, message?: string): void {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], JSON_TYPE);
  const body: unknown = JSON.parse(response.body);
  assert.equal(typeof body, 'string', `the body is a JSON string, got ${response.body}`);
  assert.ok((body as string).length > 0);
  if (message !== undefined) assert.equal(body, message);
}

function requestId(response: LightMyRequestResponse): string {
  const id = response.headers['x-request-id'];
  assert.equal(typeof id, 'string', `X-Request-Id on a ${response.statusCode}`);
  assert.ok((id as string).length > 0);
  return id as string;
}

function assertRateLimitHeaders(response: LightMyRequestResponse, remaining?: number): void {
  assert.equal(response.headers['x-ratelimit-limit'], '60', `X-RateLimit-Limit on a ${response.statusCode}`);
  assert.match(String(response.headers['x-ratelimit-remaining']), /^\d+$/, `X-RateLimit-Remaining on a ${response.statusCode}`);
  assert.match(String(response.headers['x-ratelimit-reset']), /^\d+$/, `X-RateLimit-Reset on a ${response.statusCode}`);
  if (remaining !== undefined) assert.equal(response.headers['x-ratelimit-remaining'], String(remaining));
}

function assertTooManyRequests(response: LightMyRequestResponse): void {
  assert.equal(response.statusCode, 429, response.body);
  assert.equal(response.body, '', 'a 429 has an empty body');
  assert.match(String(response.headers['retry-after']), /^\d+$/, 'Retry-After in whole seconds');
  assertRateLimitHeaders(response, 0);
  requestId(response);
}

/** A well-formed key that was never issued. */
const unknownKey = () => `acds_${randomBytes(24).toString('base64url')}`;

describeEachEngine('authentication by X-API-Key', (engine) => {
  let ctx: TestContext;
  let key: string;
  before(async () => {
    ctx = await startTestApp(engine);
    key = (await accountWithKey(ctx.accounts, 'auth')).key;
  });
  after(() => ctx.close());

  test('a valid key in X-API-Key reaches both resources', async () => {
    for (const url of ['/api/v1/conversions', '/api/v1/assets']) {
      const response = await ctx.app.inject({ url, headers: { 'x-api-key': key } });
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
      assert.equal(response.headers['content-type'], JSON_TYPE);
      assert.deepEqual(response.json(), { entries: [], totalEntries: 0, page: 1, totalPages: 0 });
    }
  });

  test('the header name is case-insensitive, as every HTTP header name is', async () => {
    const response = await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'X-API-KEY': key } });
    assert.equal(response.statusCode, 200);
  });

  test('no key at all is a 401 "missing API key", on reads and on asset writes alike', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/conversions'],
      ['GET', '/api/v1/assets'],
      ['GET', '/api/v1/assets/1'],
      ['POST', '/api/v1/assets'],
      ['PUT', '/api/v1/assets/1'],
      ['DELETE', '/api/v1/assets/1'],
    ] as const) {
      const response = await ctx.app.inject({ method, url });
      assertJsonString(response, 401, 'missing API key');
    }
  });

  test('an empty X-API-Key counts as missing', async () => {
    assertJsonString(await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': '' } }), 401, 'missing API key');
  });

  test('the key is read only from X-API-Key: Authorization or a query parameter do not authenticate', async () => {
    assertJsonString(await ctx.app.inject({ url: '/api/v1/conversions', headers: { authorization: `Bearer ${key}` } }), 401, 'missing API key');
    assertJsonString(await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'api-key': key } }), 401, 'missing API key');
    assertJsonString(await ctx.app.inject({ url: `/api/v1/conversions?api_key=${key}` }), 401, 'missing API key');
  });

  test('malformed keys are a 401 "invalid API key"', async () => {
    for (const bad of ['x', 'not a key', 'acds_', 'acds_!!!!', key.slice(0, -1), `${key}x`, key.toUpperCase(), 'a'.repeat(4000)]) {
      const response = await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': bad } });
      assertJsonString(response, 401, 'invalid API key');
    }
  });

  test('a well-formed key that was never issued is a 401 "invalid API key", even when it shares the prefix of a real one', async () => {
    assertJsonString(await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': unknownKey() } }), 401, 'invalid API key');
    const samePrefix =
      keyPrefix(key) +
      randomBytes(24)
        .toString('base64url')
        .slice(0, key.length - keyPrefix(key).length);
    assert.equal(samePrefix.length, key.length);
    assert.notEqual(samePrefix, key);
    assertJsonString(await ctx.app.inject({ url: '/api/v1/assets', headers: { 'x-api-key': samePrefix } }), 401, 'invalid API key');
  });

  test('a revoked key is a 401 "invalid API key" while the account\'s other key keeps working', async () => {
    const doomed = await ctx.accounts.createKey('revocation');
    const survivor = await ctx.accounts.createKey('revocation');
    assert.equal((await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': doomed } })).statusCode, 200);
    await ctx.accounts.revokeKey(keyPrefix(doomed));
    for (const url of ['/api/v1/conversions', '/api/v1/assets']) {
      assertJsonString(await ctx.app.inject({ url, headers: { 'x-api-key': doomed } }), 401, 'invalid API key');
    }
    assertJsonString(await ctx.app.inject({ method: 'POST', url: '/api/v1/assets', headers: { 'x-api-key': doomed } }), 401, 'invalid API key');
    assert.equal((await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': survivor } })).statusCode, 200);
  });

  test('a 401 leaks nothing: its body is the same whatever data the account holds', async () => {
    const { accountId } = await accountWithKey(ctx.accounts, 'leaky');
    await insertConversions(ctx.database, accountId, [conversionRecord()]);
    const response = await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': unknownKey() } });
    assert.equal(response.body, JSON.stringify('invalid API key'));
  });
});

describeEachEngine('rate limit of 60 requests per window per client IP', (engine) => {
  /** A window long enough that it never ends during a test. */
  let limited: TestContext;
  /** The same, behind a proxy at 127.0.0.1 that the operator trusts. */
  let proxied: TestContext;
  let key: string;
  let proxiedKey: string;
  let nextIp = 1;
  /** A client address of its own for each test, so that tests do not share a budget. */
  const freshIp = () => `198.51.100.${nextIp++}`;

  before(async () => {
    limited = await startTestApp(engine, { rateLimit: { max: 60, windowMs: 60_000 } });
    proxied = await startTestApp(engine, { rateLimit: { max: 60, windowMs: 60_000 }, trustProxy: ['127.0.0.1'] });
    key = (await accountWithKey(limited.accounts, 'limited')).key;
    proxiedKey = (await accountWithKey(proxied.accounts, 'proxied')).key;
  });
  after(async () => {
    await limited?.close();
    await proxied?.close();
  });

  const get = (app: FastifyInstance, remoteAddress: string, headers: Record<string, string> = {}, url = '/api/v1/conversions') =>
    app.inject({ url, remoteAddress, headers });

  test('every request counts down X-RateLimit-Remaining from 59, and the 61st is a 429 with an empty body and Retry-After', async () => {
    const ip = freshIp();
    for (let i = 1; i <= 60; i++) {
      const response = await get(limited.app, ip, { 'x-api-key': key });
      assert.equal(response.statusCode, 200, `request ${i}: ${response.body}`);
      assertRateLimitHeaders(response, 60 - i);
      const reset = Number(response.headers['x-ratelimit-reset']);
      assert.ok(reset >= 1 && reset <= 60, `X-RateLimit-Reset is the seconds left in the minute, got ${reset}`);
    }
    const refused = await get(limited.app, ip, { 'x-api-key': key });
    assertTooManyRequests(refused);
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After is the seconds left in the minute, got ${retryAfter}`);
    // Every other kind of /api/v1 request is refused the same way, and nothing gets through.
    assertTooManyRequests(await get(limited.app, ip, { 'x-api-key': key }, '/api/v1/assets'));
    assertTooManyRequests(await limited.app.inject({ method: 'POST', url: '/api/v1/assets', remoteAddress: ip, headers: { 'x-api-key': key } }));
    assertTooManyRequests(await get(limited.app, ip));
  });

  test('401s, 400s and unknown /api/v1 routes count toward the limit and carry the rate-limit headers', async () => {
    const ip = freshIp();
    const kinds: [string, () => Promise<LightMyRequestResponse>, number][] = [
      ['missing key', () => get(limited.app, ip), 401],
      ['invalid key', () => get(limited.app, ip, { 'x-api-key': unknownKey() }), 401],
      ['bad page', () => get(limited.app, ip, { 'x-api-key': key }, '/api/v1/conversions?page=0'), 400],
      ['unknown filter', () => get(limited.app, ip, { 'x-api-key': key }, '/api/v1/assets?nmae=x'), 400],
      ['unknown route', () => get(limited.app, ip, { 'x-api-key': key }, '/api/v1/nothing-here'), 404],
      ['unknown route without key', () => get(limited.app, ip, {}, '/api/v1/nothing/here'), 0],
    ];
    let sent = 0;
    for (let round = 0; round < 10; round++) {
      for (const [name, send, status] of kinds) {
        const response = await send();
        sent++;
        if (status !== 0) assert.equal(response.statusCode, status, `${name}: ${response.body}`);
        else assert.ok([401, 404].includes(response.statusCode), `${name}: ${response.statusCode}`);
        assertRateLimitHeaders(response, 60 - sent);
      }
    }
    assert.equal(sent, 60);
    assertTooManyRequests(await get(limited.app, ip, { 'x-api-key': key }));
  });

  test('two client addresses have separate budgets', async () => {
    const first = freshIp();
    const second = freshIp();
    for (let i = 0; i < 60; i++) assert.equal((await get(limited.app, first)).statusCode, 401);
    assertTooManyRequests(await get(limited.app, first, { 'x-api-key': key }));
    const other = await get(limited.app, second, { 'x-api-key': key });
    assert.equal(other.statusCode, 200);
    assertRateLimitHeaders(other, 59);
    assertTooManyRequests(await get(limited.app, first, { 'x-api-key': key }));
  });

  test('IPv6 clients count by their /64: another address in it shares the budget, the next /64 has its own', async () => {
    const network = `2001:db8:${nextIp++}:1`;
    for (let i = 0; i < 60; i++) assert.equal((await get(limited.app, `${network}::${(i + 1).toString(16)}`)).statusCode, 401);
    assertTooManyRequests(await get(limited.app, `${network}:ffff:ffff:ffff:ffff`, { 'x-api-key': key }));
    const next = await get(limited.app, `2001:db8:${nextIp++}:2::1`, { 'x-api-key': key });
    assert.equal(next.statusCode, 200);
    assertRateLimitHeaders(next, 59);
  });

  test('an IPv4 address mapped into IPv6 counts with the IPv4 address', async () => {
    const ip = freshIp();
    for (let i = 0; i < 30; i++) await get(limited.app, ip);
    for (let i = 0; i < 30; i++) await get(limited.app, `::ffff:${ip}`);
    assertTooManyRequests(await get(limited.app, ip, { 'x-api-key': key }));
  });

  test('with RATE_LIMIT_IPV6_PREFIX=128 each IPv6 address has its own budget', async () => {
    const perAddress = await startTestApp(engine, { rateLimit: { max: 60, windowMs: 60_000 }, rateLimitIpv6Prefix: 128 });
    try {
      const ownKey = (await accountWithKey(perAddress.accounts, 'per-address')).key;
      for (let i = 0; i < 60; i++) await get(perAddress.app, '2001:db8:ffff:1::1');
      assertTooManyRequests(await get(perAddress.app, '2001:db8:ffff:1::1', { 'x-api-key': ownKey }));
      const neighbour = await get(perAddress.app, '2001:db8:ffff:1::2', { 'x-api-key': ownKey });
      assert.equal(neighbour.statusCode, 200);
      assertRateLimitHeaders(neighbour, 59);
    } finally {
      await perAddress.close();
    }
  });

  test('without TRUST_PROXY, X-Forwarded-For is ignored: a client cannot forge its way to a fresh budget', async () => {
    const ip = freshIp();
    for (let i = 0; i < 60; i++) {
      const response = await get(limited.app, ip, { 'x-api-key': key, 'x-forwarded-for': `203.0.113.${i + 1}` });
      assert.equal(response.statusCode, 200);
      assertRateLimitHeaders(response, 59 - i);
    }
    assertTooManyRequests(await get(limited.app, ip, { 'x-api-key': key, 'x-forwarded-for': '192.0.2.77' }));
    assertTooManyRequests(await get(limited.app, ip, { 'x-api-key': key, 'x-forwarded-for': `${freshIp()}, ${ip}` }));
  });

  test('with TRUST_PROXY, X-Forwarded-For from a trusted proxy names the client, and each forwarded client has its own budget', async () => {
    const proxy = '127.0.0.1';
    for (let i = 0; i < 60; i++) {
      const response = await get(proxied.app, proxy, { 'x-api-key': proxiedKey, 'x-forwarded-for': '203.0.113.10' });
      assert.equal(response.statusCode, 200);
      assertRateLimitHeaders(response, 59 - i);
    }
    assertTooManyRequests(await get(proxied.app, proxy, { 'x-api-key': proxiedKey, 'x-forwarded-for': '203.0.113.10' }));
    // Another client behind the same proxy is not punished for the first one's requests...
    const neighbour = await get(proxied.app, proxy, { 'x-api-key': proxiedKey, 'x-forwarded-for': '203.0.113.11' });
    assert.equal(neighbour.statusCode, 200);
    assertRateLimitHeaders(neighbour, 59);
    // ...and the proxy's own address has its own, untouched budget.
    const direct = await get(proxied.app, proxy, { 'x-api-key': proxiedKey });
    assert.equal(direct.statusCode, 200);
    assertRateLimitHeaders(direct, 59);
  });

  test('with TRUST_PROXY, X-Forwarded-For from an address that is not a trusted proxy is still ignored', async () => {
    const stranger = freshIp();
    for (let i = 0; i < 60; i++) {
      const response = await get(proxied.app, stranger, { 'x-api-key': proxiedKey, 'x-forwarded-for': `192.0.2.${i + 1}` });
      assert.equal(response.statusCode, 200);
      assertRateLimitHeaders(response, 59 - i);
    }
    assertTooManyRequests(await get(proxied.app, stranger, { 'x-api-key': proxiedKey, 'x-forwarded-for': '192.0.2.200' }));
  });

  test('/openapi.json and /docs are outside /api/v1 and are neither counted nor refused', async () => {
    const ip = freshIp();
    for (let i = 0; i < 60; i++) await get(limited.app, ip);
    assertTooManyRequests(await get(limited.app, ip));
    for (let i = 0; i < 5; i++) {
      const openapi = await limited.app.inject({ url: '/openapi.json', remoteAddress: ip });
      assert.equal(openapi.statusCode, 200);
      assert.equal(openapi.headers['x-ratelimit-limit'], undefined);
      const docs = await limited.app.inject({ url: '/docs', remoteAddress: ip });
      assert.ok([200, 302].includes(docs.statusCode), `/docs: ${docs.statusCode}`);
    }
  });

  // Requests that arrive in the same tick, as inject's do here and as HTTP/1.1 pipelined requests
  // in one TCP segment do on a real socket, must be counted one by one like any others.
  test('61 requests arriving at once from one client: exactly 60 are served and one is refused', async () => {
    const ip = freshIp();
    const responses = await Promise.all(Array.from({ length: 61 }, () => get(limited.app, ip, { 'x-api-key': key })));
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 429).length, 1, `one 429 among: ${statuses.join(' ')}`);
    assert.equal(statuses.filter((status) => status === 200).length, 60, statuses.join(' '));
    assertTooManyRequests(responses.find((response) => response.statusCode === 429)!);
  });

  describe('when the window ends', () => {
    const WINDOW_MS = 800;
    let short: TestContext;
    let shortKey: string;
    before(async () => {
      short = await startTestApp(engine, { rateLimit: { max: 60, windowMs: WINDOW_MS } });
      shortKey = (await accountWithKey(short.accounts, 'short')).key;
    });
    after(() => short?.close());

    test('a refused client gets its full budget back once the window has passed', async () => {
      const ip = '192.0.2.50';
      const send = (headers: Record<string, string> = { 'x-api-key': shortKey }) =>
        short.app.inject({ url: '/api/v1/conversions', remoteAddress: ip, headers });
      const started = Date.now();
      const first = await send();
      assert.equal(first.statusCode, 200);
      assertRateLimitHeaders(first, 59);
      assert.equal(first.headers['x-ratelimit-reset'], '1', 'an 800 ms window has at most 1 second left');
      // The rest of the budget on requests that need no database, so that they surely fit in the window.
      for (let i = 2; i <= 60; i++) assert.equal((await send({})).statusCode, 401);
      const refused = await send();
      assert.ok(Date.now() - started < WINDOW_MS, 'the burst fitted in the window (else the machine is too slow for this test)');
      assertTooManyRequests(refused);
      assert.equal(refused.headers['retry-after'], '1');

      await sleep(started + WINDOW_MS + 200 - Date.now());
      const again = await send();
      assert.equal(again.statusCode, 200, again.body);
      assertRateLimitHeaders(again, 59);
    });
  });
});

describeEachEngine('request ids, unknown routes and the OpenAPI document', (engine) => {
  let ctx: TestContext;
  let limited: TestContext;
  let key: string;
  before(async () => {
    ctx = await startTestApp(engine);
    limited = await startTestApp(engine, { rateLimit: { max: 60, windowMs: 60_000 } });
    key = (await accountWithKey(ctx.accounts, 'ids')).key;
  });
  after(async () => {
    await ctx?.close();
    await limited?.close();
  });

  test('every response carries its own X-Request-Id: 200, 400, 401, 404 and 429', async () => {
    const responses = [
      await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': key } }),
      await ctx.app.inject({ url: '/api/v1/conversions?page=abc', headers: { 'x-api-key': key } }),
      await ctx.app.inject({ method: 'POST', url: '/api/v1/assets', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: '{}' }),
      await ctx.app.inject({ url: '/api/v1/conversions' }),
      await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': unknownKey() } }),
      await ctx.app.inject({ url: '/api/v1/no-such-thing', headers: { 'x-api-key': key } }),
      await ctx.app.inject({ url: '/no-such-thing' }),
      await ctx.app.inject({ url: '/openapi.json' }),
    ];
    assert.deepEqual(
      responses.map((response) => response.statusCode),
      [200, 400, 400, 401, 401, 404, 404, 200],
    );
    for (let i = 0; i < 61; i++) responses.push(await limited.app.inject({ url: '/api/v1/conversions', remoteAddress: '192.0.2.9' }));
    assert.equal(responses.at(-1)!.statusCode, 429);
    const ids = responses.map(requestId);
    assert.equal(new Set(ids).size, ids.length, 'no two responses share a request id');
  });

  test('a request id the client sends is kept and echoed when it looks like an id (request-id.test.ts), else the answer gets a new one', async () => {
    const sent = 'trace-4bf92f3577b34da6.1';
    const kept = await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': key, 'x-request-id': sent } });
    assert.equal(kept.statusCode, 200);
    assert.equal(requestId(kept), sent);
    const refused = await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': key, 'x-request-id': 'not an id' } });
    assert.match(requestId(refused), UUID);
  });

  test('an unknown route under /api/v1 is a 404 with a JSON string body, for any method', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/nothing'],
      ['GET', '/api/v1/conversions/1'],
      ['GET', '/api/v1/conversions/extra/path'],
      ['POST', '/api/v1/conversions'],
      ['DELETE', '/api/v1/conversions'],
      ['GET', '/api/v2/conversions'],
      ['GET', '/api/conversions'],
    ] as const) {
      const response = await ctx.app.inject({ method, url, headers: { 'x-api-key': key } });
      assertJsonString(response, 404);
      requestId(response);
    }
  });

  test('/openapi.json is an OpenAPI 3 document listing the conversions and assets paths and the X-API-Key scheme', async () => {
    const response = await ctx.app.inject({ url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    const document = response.json();
    assert.match(document.openapi, /^3\.\d+\.\d+$/);
    const paths = Object.keys(document.paths);
    assert.ok(paths.includes('/api/v1/conversions'), paths.join(' '));
    assert.ok(paths.includes('/api/v1/assets'), paths.join(' '));
    assert.ok(document.paths['/api/v1/conversions'].get);
    assert.ok(document.paths['/api/v1/assets'].get);
    assert.ok(document.paths['/api/v1/assets'].post);
    const single = paths.find((p) => /^\/api\/v1\/assets\/\{[^}]+\}$/.test(p));
    assert.ok(single, `an /api/v1/assets/{id} path among ${paths.join(' ')}`);
    assert.ok(document.paths[single].put);
    assert.ok(document.paths[single].delete);
    const schemes = Object.values(document.components?.securitySchemes ?? {}) as { type: string; in: string; name: string }[];
    assert.ok(
      schemes.some((s) => s.type === 'apiKey' && s.in === 'header' && s.name.toLowerCase() === 'x-api-key'),
      JSON.stringify(schemes),
    );
  });

  test('/docs answers with a browsable page', async () => {
    let response = await ctx.app.inject({ url: '/docs' });
    for (let hops = 0; response.statusCode >= 300 && response.statusCode < 400 && hops < 3; hops++) {
      const location = new URL(String(response.headers.location), 'http://localhost/docs');
      response = await ctx.app.inject({ url: location.pathname + location.search });
    }
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(response.body, /<html/i);
  });
});

describeEachEngine('unexpected errors', (engine) => {
  const SECRET = `secret-${randomBytes(4).toString('hex')}`;
  let database: TestDatabase;
  let app: FastifyInstance;
  let broken: TestContext;
  let brokenKey: string;

  before(async () => {
    database = await freshDatabase(engine);
    app = await buildApp({ config: testConfig(database, { rateLimit: { max: 0, windowMs: 60_000 } }), database });
    // Routes of a test's own on a fresh app, before ready(): code that fails as a bug would.
    app.get('/boom', async () => {
      throw new Error(`failure at /srv/${SECRET}`);
    });
    app.get('/boom-type-error', async (request) => {
      const nothing = (request.query as Record<string, { deep: string } | undefined>).missing;
      return nothing!.deep + SECRET;
    });
    app.get('/boom-not-an-error', async () => {
      throw { detail: SECRET };
    });
    await app.ready();

    // A real route whose database fails under it.
    broken = await startTestApp(engine);
    const account = await accountWithKey(broken.accounts, 'broken');
    brokenKey = account.key;
    // A conversion the index holds, whose entry the list then reads from the table gone.
    await insertConversions(broken.database, account.accountId, [conversionRecord()]);
    assert.equal((await broken.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': brokenKey } })).json().totalEntries, 1);
    await sql`alter table conversions rename to ${sql.raw(`conversions_${SECRET.replace('-', '_')}`)}`.execute(broken.database.db);
  });
  after(async () => {
    await app?.close();
    await database?.close();
    await broken?.close();
  });

  test('a thrown error is a 500 "internal error" with a request id and no stack trace or detail', async () => {
    for (const url of ['/boom', '/boom-type-error', '/boom-not-an-error']) {
      const response = await app.inject({ url });
      assertJsonString(response, 500, 'internal error');
      assert.ok(!response.body.includes(SECRET), response.body);
      assert.ok(!/\bat\s|stack|Error/.test(response.body), response.body);
      requestId(response);
    }
  });

  test('a failing database under a real /api/v1 route is a 500 "internal error" that names neither table nor engine', async () => {
    const response = await broken.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': brokenKey } });
    assertJsonString(response, 500, 'internal error');
    assert.ok(!/conversions|relation|table|sqlite|postgres/i.test(response.body), response.body);
    requestId(response);
    // The rest of the service is unaffected.
    assert.equal((await broken.app.inject({ url: '/api/v1/assets', headers: { 'x-api-key': brokenKey } })).statusCode, 200);
  });
});
