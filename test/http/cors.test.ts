import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';

/**
 * Which pages on other origins may read the service's answers: public asset URLs any page's,
 * the API only those of the origins CORS_ORIGINS lists, its preflights answered before the rate
 * limit and the key (which a preflight never carries), and its errors readable by those pages.
 */

const SHOP = 'https://shop.example.com';
const STRANGER = 'https://stranger.example';

function preflight(ctx: TestContext, url: string, origin: string, method = 'GET', headers = 'x-api-key') {
  return ctx.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

const listed = (value: unknown) =>
  String(value ?? '')
    .toLowerCase()
    .split(/\s*,\s*/);

describe('CORS', () => {
  let open: TestContext;
  let closed: TestContext;
  let any: TestContext;
  let key: string;
  let closedKey: string;
  let publicPath: string;
  before(async () => {
    // An API limit of two requests a minute: preflights beyond it must still be answered.
    open = await startTestApp('sqlite', { corsOrigins: [SHOP], rateLimit: { max: 2, windowMs: 60_000 } });
    closed = await startTestApp('sqlite');
    any = await startTestApp('sqlite', { corsOrigins: ['*'] });
    key = (await accountWithKey(open.accounts, 'open')).key;
    closedKey = (await accountWithKey(closed.accounts, 'closed')).key;
    const form = new FormData();
    form.append('name', 'font.css');
    form.append('content', 'body { color: teal }');
    const created = await closed.app.inject({ method: 'POST', url: '/api/v1/assets', headers: { 'x-api-key': closedKey }, body: form });
    assert.equal(created.statusCode, 200, created.body);
    const entry = await closed.app.inject({ url: `/api/v1/assets/${created.json().id}`, headers: { 'x-api-key': closedKey } });
    publicPath = new URL(entry.json().public_url).pathname;
  });
  after(async () => {
    await open?.close();
    await closed?.close();
    await any?.close();
  });

  test("a listed origin's preflight is answered before the rate limit and the key, with the API's methods and headers", async () => {
    for (let i = 0; i < 4; i++) {
      const answer = await preflight(open, '/api/v1/assets/7', SHOP, 'DELETE', 'x-api-key, content-type, x-request-id');
      assert.equal(answer.statusCode, 204, answer.body);
      assert.equal(answer.headers['access-control-allow-origin'], SHOP);
      assert.ok(listed(answer.headers['access-control-allow-methods']).includes('delete'));
      for (const header of ['x-api-key', 'content-type', 'x-request-id']) {
        assert.ok(listed(answer.headers['access-control-allow-headers']).includes(header), header);
      }
      assert.equal(answer.headers['access-control-max-age'], '600');
      assert.equal(answer.headers['access-control-allow-credentials'], undefined, 'keys travel in a header, never in cookies');
    }
  });

  test("a listed origin reads the API's answers and the headers a client needs, errors included", async () => {
    const page = await open.app.inject({ url: '/api/v1/conversions', headers: { origin: SHOP, 'x-api-key': key } });
    assert.equal(page.statusCode, 200, page.body);
    assert.equal(page.headers['access-control-allow-origin'], SHOP);
    assert.match(String(page.headers.vary), /origin/i, 'caches keep one answer per origin');
    for (const header of ['x-request-id', 'link', 'retry-after', 'x-ratelimit-remaining']) {
      assert.ok(listed(page.headers['access-control-expose-headers']).includes(header), header);
    }
    const unauthorized = await open.app.inject({ url: '/api/v1/conversions', headers: { origin: SHOP } });
    assert.equal(unauthorized.statusCode, 401);
    assert.equal(unauthorized.headers['access-control-allow-origin'], SHOP, 'the page can show why');
    // The limit of two is spent by now: the third answer is a 429 the page can read too.
    const limited = await open.app.inject({ url: '/api/v1/conversions', headers: { origin: SHOP, 'x-api-key': key } });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['access-control-allow-origin'], SHOP);
  });

  test('an origin not listed gets no permission to read, and the request is handled as any other', async () => {
    const answer = await preflight(open, '/api/v1/conversions', STRANGER);
    assert.equal(answer.headers['access-control-allow-origin'], undefined);
    const list = await closed.app.inject({ url: '/api/v1/conversions', headers: { origin: STRANGER, 'x-api-key': closedKey } });
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['access-control-allow-origin'], undefined);
  });

  test('without CORS_ORIGINS no origin may read the API, a preflight being refused as a request without a key', async () => {
    const answer = await preflight(closed, '/api/v1/conversions', SHOP);
    assert.equal(answer.statusCode, 401);
    assert.equal(answer.headers['access-control-allow-origin'], undefined);
  });

  test('with CORS_ORIGINS set, an OPTIONS that is no preflight (no Origin) is a request as any other: counted, its key checked, answered in JSON', async () => {
    const limited = await startTestApp('sqlite', { corsOrigins: [SHOP], rateLimit: { max: 2, windowMs: 60_000 } });
    try {
      const { key: limitedKey } = await accountWithKey(limited.accounts, 'limited');
      const options = (headers: Record<string, string> = {}) => limited.app.inject({ method: 'OPTIONS', url: '/api/v1/conversions', headers });
      const withoutKey = await options();
      assert.equal(withoutKey.statusCode, 401, withoutKey.body);
      assert.equal(typeof withoutKey.json(), 'string');
      assert.equal(withoutKey.headers['x-ratelimit-remaining'], '1');
      const withKey = await options({ 'x-api-key': limitedKey });
      assert.equal(withKey.statusCode, 404, withKey.body);
      assert.equal(typeof withKey.json(), 'string');
      assert.equal((await options({ 'x-api-key': limitedKey })).statusCode, 429, 'the third in a minute is over the limit of two');
      const real = await preflight(limited, '/api/v1/conversions', SHOP);
      assert.equal(real.statusCode, 204, 'a preflight is still answered, past the limit');
    } finally {
      await limited.close();
    }
  });

  test('CORS_ORIGINS=* lets any origin read the API', async () => {
    const answer = await preflight(any, '/api/v1/conversions', STRANGER);
    assert.equal(answer.statusCode, 204);
    assert.equal(answer.headers['access-control-allow-origin'], '*');
  });

  test('public asset URLs are readable from any origin, ranges and validators included, whatever CORS_ORIGINS says', async () => {
    const answer = await preflight(closed, publicPath, STRANGER, 'GET', 'range, if-none-match');
    assert.equal(answer.statusCode, 204);
    assert.equal(answer.headers['access-control-allow-origin'], '*');
    assert.deepEqual(listed(answer.headers['access-control-allow-methods']), ['get', 'head']);
    const bytes = await closed.app.inject({ url: publicPath, headers: { origin: STRANGER, range: 'bytes=0-3' } });
    assert.equal(bytes.statusCode, 206);
    assert.equal(bytes.body, 'body');
    assert.equal(bytes.headers['access-control-allow-origin'], '*');
    for (const header of ['etag', 'content-range', 'accept-ranges']) {
      assert.ok(listed(bytes.headers['access-control-expose-headers']).includes(header), header);
    }
  });

  test('paths outside the API and public delivery give no CORS permission', async () => {
    for (const path of ['/openapi.json', '/hooks/generic/some-token', '/health']) {
      const answer = await preflight(any, path, STRANGER);
      assert.equal(answer.headers['access-control-allow-origin'], undefined, path);
    }
  });
});
