import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine } from '../helpers/database.js';

/**
 * An asset's `public_url` starts with the configured PUBLIC_URL, or else with where the service
 * listens; never with the request's Host (or X-Forwarded-Host), which whoever sends the request
 * chooses, so that an entry read through a forged Host cannot point a page at another server.
 */

const FORGED = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
const PUBLIC_PATH = /^\/public\/[0-9a-f]{16}\/[0-9a-f]{24}$/;

async function createTextAsset(ctx: TestContext, key: string, name: string): Promise<number> {
  const form = new FormData();
  form.append('name', name);
  form.append('content', `bytes of ${name}`);
  const response = await ctx.app.inject({ method: 'POST', url: '/api/v1/assets', headers: { 'x-api-key': key }, body: form });
  assert.equal(response.statusCode, 200, response.body);
  return Number(response.json().id);
}

/** The public_url of the asset as its entry and as the list give it, read with the headers given. */
async function publicUrls(ctx: TestContext, key: string, id: number, headers: Record<string, string> = {}): Promise<string[]> {
  const entry = await ctx.app.inject({ url: `/api/v1/assets/${id}`, headers: { 'x-api-key': key, ...headers } });
  assert.equal(entry.statusCode, 200, entry.body);
  const list = await ctx.app.inject({ url: `/api/v1/assets?id=${id}`, headers: { 'x-api-key': key, ...headers } });
  assert.equal(list.statusCode, 200, list.body);
  return [entry.json().public_url, list.json().entries[0].public_url];
}

describeEachEngine('public_url', (engine) => {
  let unset: TestContext;
  let configured: TestContext;
  let unsetKey: string;
  let configuredKey: string;
  before(async () => {
    // Behind a trusted proxy, so that X-Forwarded-Host would be believed if anything read it.
    unset = await startTestApp(engine, { trustProxy: ['127.0.0.1'] });
    configured = await startTestApp(engine, { publicUrl: 'https://cdn.example.com/acds', trustProxy: ['127.0.0.1'] });
    unsetKey = (await accountWithKey(unset.accounts, 'unset')).key;
    configuredKey = (await accountWithKey(configured.accounts, 'configured')).key;
  });
  after(async () => {
    await unset?.close();
    await configured?.close();
  });

  test('with PUBLIC_URL set, every public_url starts with it and its path, whatever Host the request names', async () => {
    const id = await createTextAsset(configured, configuredKey, 'configured.txt');
    for (const headers of [{}, FORGED]) {
      for (const url of await publicUrls(configured, configuredKey, id, headers)) {
        assert.ok(url.startsWith('https://cdn.example.com/acds/public/'), url);
        assert.match(url.slice('https://cdn.example.com/acds'.length), PUBLIC_PATH);
      }
    }
  });

  test('without PUBLIC_URL, public_url starts with http://HOST:PORT of the configuration, not with the Host header', async () => {
    const id = await createTextAsset(unset, unsetKey, 'unset.txt');
    for (const headers of [{}, FORGED]) {
      for (const url of await publicUrls(unset, unsetKey, id, headers)) {
        assert.ok(url.startsWith('http://127.0.0.1:3000/public/'), url);
        assert.ok(!url.includes('evil'), url);
      }
    }
  });

  test('the asset list answers the same ETag whatever Host the request names', async () => {
    const list = (headers: Record<string, string>) => unset.app.inject({ url: '/api/v1/assets', headers: { 'x-api-key': unsetKey, ...headers } });
    const plain = await list({});
    const forged = await list(FORGED);
    assert.equal(forged.headers.etag, plain.headers.etag);
    assert.equal((await list({ ...FORGED, 'if-none-match': String(plain.headers.etag) })).statusCode, 304);
  });

  test('without PUBLIC_URL, a service given port 0 builds public_url on the port it listens on, and the URL serves the bytes', async () => {
    const ctx = await startTestApp(engine, { port: 0 });
    try {
      const { key } = await accountWithKey(ctx.accounts, 'listening');
      const id = await createTextAsset(ctx, key, 'listening.txt');
      const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      const entry = await (await fetch(`${address}/api/v1/assets/${id}`, { headers: { 'x-api-key': key, host: 'evil.example' } })).json();
      assert.ok(entry.public_url.startsWith(`${address}/public/`), `${entry.public_url} starts with ${address}`);
      const served = await fetch(entry.public_url);
      assert.equal(served.status, 200);
      assert.equal(await served.text(), 'bytes of listening.txt');
    } finally {
      await ctx.close();
    }
  });
});
