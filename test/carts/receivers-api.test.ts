import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CartService } from '../../src/carts/service.js';
import { type TestContext, accountWithKey, startTestApp } from '../helpers/app.js';
import { randomSecret } from '../helpers/carts.js';
import { describeEachEngine } from '../helpers/database.js';

/**
 * GET /api/v1/cart-receivers on the real app: the account's connected carts, each with its
 * receiver's path showing only the token's first characters, never the token or the secret.
 */

const RFC3339_UTC_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describeEachEngine('GET /api/v1/cart-receivers', (engine) => {
  let ctx: TestContext;
  let key: string;
  let otherKey: string;
  const secrets = { digistore: randomSecret(), clickbank: randomSecret() };
  const paths: Record<string, string> = {};
  let connectedFrom: number;
  let connectedTo: number;
  before(async () => {
    ctx = await startTestApp(engine);
    const shop = await accountWithKey(ctx.accounts, 'shop');
    key = shop.key;
    otherKey = (await accountWithKey(ctx.accounts, 'other')).key;
    const carts = new CartService(ctx.database);
    connectedFrom = Math.floor(Date.now() / 1000);
    // Connected out of order: the list is by cart.
    paths.digistore = await carts.connect(shop.accountId, 'digistore', secrets.digistore);
    paths.clickbank = await carts.connect(shop.accountId, 'clickbank', secrets.clickbank);
    connectedTo = Math.floor(Date.now() / 1000);
  });
  after(() => ctx?.close());

  const receiversOf = async (apiKey: string) => {
    const response = await ctx.app.inject({ url: '/api/v1/cart-receivers', headers: { 'x-api-key': apiKey } });
    assert.equal(response.statusCode, 200, response.body);
    return response.json();
  };

  test("lists the account's connected carts by cart, each path the receiver's with only the token's first characters", async () => {
    const body = await receiversOf(key);
    assert.deepEqual(Object.keys(body), ['receivers']);
    const { receivers } = body as { receivers: { cart: string; path: string; connected_at: string }[] };
    assert.deepEqual(
      receivers.map((receiver) => receiver.cart),
      ['clickbank', 'digistore'],
    );
    for (const receiver of receivers) {
      assert.deepEqual(Object.keys(receiver).sort(), ['cart', 'connected_at', 'path']);
      const full = paths[receiver.cart]!;
      const token = full.slice(`/hooks/${receiver.cart}/`.length);
      assert.ok(token.length > 20, `the whole token: ${full}`);
      assert.ok(receiver.path.startsWith(`/hooks/${receiver.cart}/`), receiver.path);
      assert.ok(receiver.path.endsWith('…'), receiver.path);
      assert.ok(full.startsWith(receiver.path.slice(0, -1)), `${receiver.path} is the start of ${full}`);
      assert.ok(receiver.path.length < full.length, `${receiver.path} is shorter than ${full}`);
      assert.ok(!receiver.path.includes(token), 'never the whole token');
      assert.match(receiver.connected_at, RFC3339_UTC_SECONDS);
      const connectedAt = Date.parse(receiver.connected_at) / 1000;
      assert.ok(connectedAt >= connectedFrom && connectedAt <= connectedTo, receiver.connected_at);
    }
  });

  test('never answers a token or a secret', async () => {
    const response = await ctx.app.inject({ url: '/api/v1/cart-receivers', headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8', 'the … as UTF-8');
    for (const secret of Object.values(secrets)) assert.ok(!response.body.includes(secret), 'not the secret');
    for (const full of Object.values(paths)) assert.ok(!response.body.includes(full.split('/').at(-1)!), 'not the token');
  });

  test("another account sees none of the account's carts", async () => {
    assert.deepEqual(await receiversOf(otherKey), { receivers: [] });
  });

  test('asks for an API key', async () => {
    const none = await ctx.app.inject({ url: '/api/v1/cart-receivers' });
    assert.equal(none.statusCode, 401, none.body);
    const wrong = await ctx.app.inject({ url: '/api/v1/cart-receivers', headers: { 'x-api-key': 'acds_not-a-key' } });
    assert.equal(wrong.statusCode, 401, wrong.body);
  });
});
