import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine, testConfig } from '../helpers/database.js';
import { conversionRecord, insertConversions } from '../helpers/fixtures.js';

/**
 * List responses carry an ETag derived from what the list's rows are as of (conversions: their
 * newest id; assets: the account's data version), so that a poller asking again with
 * If-None-Match gets a 304 without a body while nothing changed, and the new page the moment
 * anything did.
 */
describeEachEngine('list ETags and 304s', (engine) => {
  let ctx: TestContext;
  let apiKey: string;
  let accountId: number;
  const get = (url: string, headers: Record<string, string> = {}, key = apiKey) =>
    ctx.app.inject({ method: 'GET', url, headers: { 'x-api-key': key, ...headers } });
  /** Uploads a small text asset with these form fields. */
  const uploadAsset = async (fields: Record<string, string>) => {
    const form = new FormData();
    for (const [name, value] of Object.entries({ ...fields, content: 'hello' })) form.append(name, value);
    const created = await ctx.app.inject({ method: 'POST', url: '/api/v1/assets', headers: { 'x-api-key': apiKey }, body: form });
    assert.equal(created.statusCode, 200, created.body);
  };

  before(async () => {
    ctx = await startTestApp(engine);
    ({ key: apiKey, accountId } = await accountWithKey(ctx.accounts, 'etags'));
    await insertConversions(ctx.database, accountId, [conversionRecord({ receipt: 'E-1', amount: 10 }), conversionRecord({ receipt: 'E-2', amount: 500 })]);
  });
  after(() => ctx.close());

  test('a list answers with an ETag, and with 304 and no body when asked again with it', async () => {
    const first = await get('/api/v1/conversions?amount.gte=5');
    assert.equal(first.statusCode, 200);
    const etag = first.headers.etag as string;
    assert.match(etag, /^"[\w-]+"$/);
    assert.equal(first.headers['cache-control'], 'private, no-cache');
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get('/api/v1/conversions?amount.gte=5', { 'if-none-match': ifNoneMatch });
      assert.equal(again.statusCode, 304, `If-None-Match: ${ifNoneMatch}`);
      assert.equal(again.body, '');
      assert.equal(again.headers.etag, etag);
    }
    assert.equal((await get('/api/v1/conversions?amount.gte=5', { 'if-none-match': '"other"' })).statusCode, 200);
  });

  test('the tag names the filters and the page, whatever their order in the query string', async () => {
    const tag = async (query: string) => (await get(`/api/v1/conversions?${query}`)).headers.etag;
    assert.equal(await tag('amount.gte=5&receipt.ne=x'), await tag('receipt.ne=x&amount.gte=5'));
    assert.notEqual(await tag('amount.gte=5'), await tag('amount.gte=6'));
    assert.notEqual(await tag('amount.gte=5'), await tag('amount.gte=5&page=2'));
  });

  test('an import makes the old tag stale at once: the same request gets the new page', async () => {
    const before = await get('/api/v1/conversions?amount=500');
    await insertConversions(ctx.database, accountId, [conversionRecord({ receipt: 'E-3', amount: 500 })]);
    const after = await get('/api/v1/conversions?amount=500', { 'if-none-match': before.headers.etag as string });
    assert.equal(after.statusCode, 200);
    assert.notEqual(after.headers.etag, before.headers.etag);
    assert.equal(after.json().totalEntries, before.json().totalEntries + 1);
  });

  test('an asset write leaves the conversions tag as it was: the same request still gets a 304', async () => {
    const before = await get('/api/v1/conversions?amount.gte=5');
    await uploadAsset({ name: 'unrelated.txt' });
    const after = await get('/api/v1/conversions?amount.gte=5', { 'if-none-match': before.headers.etag as string });
    assert.equal(after.statusCode, 304);
    assert.equal(after.headers.etag, before.headers.etag);
  });

  test("another account's identical request has its own tag", async () => {
    const other = await accountWithKey(ctx.accounts, 'etags-other');
    const mine = await get('/api/v1/conversions');
    const theirs = await get('/api/v1/conversions', { 'if-none-match': mine.headers.etag as string }, other.key);
    assert.equal(theirs.statusCode, 200);
    assert.notEqual(theirs.headers.etag, mine.headers.etag);
  });

  test('an asset write makes the asset list tag stale; the tag also names the PUBLIC_URL its URLs are built on', async () => {
    const list = () => get('/api/v1/assets?folder=tagged');
    const before = await list();
    assert.equal((await get('/api/v1/assets?folder=tagged', { 'if-none-match': before.headers.etag as string })).statusCode, 304);
    const elsewhere = await buildApp({
      config: testConfig(ctx.database, { publicUrl: 'https://assets.example.com' }),
      database: ctx.database,
      blobs: ctx.blobs,
    });
    try {
      const seenElsewhere = await elsewhere.inject({ url: '/api/v1/assets?folder=tagged', headers: { 'x-api-key': apiKey } });
      assert.equal(seenElsewhere.statusCode, 200, seenElsewhere.body);
      assert.notEqual(seenElsewhere.headers.etag, before.headers.etag);
    } finally {
      await elsewhere.close();
    }
    await uploadAsset({ name: 'a.txt', folder: 'tagged' });
    const after = await get('/api/v1/assets?folder=tagged', { 'if-none-match': before.headers.etag as string });
    assert.equal(after.statusCode, 200);
    assert.equal(after.json().totalEntries, 1);
  });

  test('a bad filter is still a 400, whatever If-None-Match says', async () => {
    const response = await get('/api/v1/conversions?nope=1', { 'if-none-match': '*' });
    assert.equal(response.statusCode, 400);
  });
});
