import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CartService } from '../../src/carts/service.js';
import { type TestContext, accountWithKey, startTestApp } from '../helpers/app.js';
import { clickbankBody, clickbankSale, genericEvent, genericSignatureHeader, randomSecret } from '../helpers/carts.js';
import { describeEachEngine } from '../helpers/database.js';
import { holdImportWrites } from '../helpers/write-locks.js';

/**
 * The receivers at /hooks/{cart}/{token} over HTTP, on the real app: what they store, what they
 * answer, and cart events listed beside conversions.
 */

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describeEachEngine('cart notifications', (engine) => {
  let ctx: TestContext;
  let key: string;
  let otherKey: string;
  let shopId: number;
  const secrets = { clickbank: randomSecret(), generic: `whsec_${randomSecret(24)}` };
  const paths: Record<string, string> = {};
  before(async () => {
    ctx = await startTestApp(engine);
    const shop = await accountWithKey(ctx.accounts, 'shop');
    key = shop.key;
    shopId = shop.accountId;
    const other = await accountWithKey(ctx.accounts, 'other');
    otherKey = other.key;
    const carts = new CartService(ctx.database);
    paths.clickbank = await carts.connect(shop.accountId, 'clickbank', secrets.clickbank);
    paths.generic = await carts.connect(shop.accountId, 'generic', secrets.generic);
    paths.buygoods = await carts.connect(shop.accountId, 'buygoods', undefined);
    paths.otherGeneric = await carts.connect(other.accountId, 'generic', secrets.generic);
  });
  after(() => ctx?.close());

  const api = async (url: string, apiKey = key) => {
    const response = await ctx.app.inject({ url, headers: { 'x-api-key': apiKey } });
    assert.equal(response.statusCode, 200, response.body);
    return response.json();
  };
  const postGeneric = (event: object, path = paths.generic!, secret = secrets.generic) => {
    const body = JSON.stringify(event);
    return ctx.app.inject({
      method: 'POST',
      url: path,
      payload: body,
      headers: { 'content-type': 'application/json', 'x-signature': genericSignatureHeader(secret, body) },
    });
  };
  const eventsOf = async (query: string, apiKey = key) => (await api(`/api/v1/cart-events?${query}`, apiKey)).entries;

  test('a sale posted live is in the conversion list at once, with the exact total', async () => {
    for (let index = 1; index <= 5; index++) {
      const response = await postGeneric(genericEvent(`live-${index}`, `LIVE-${index}`, { amount: 10 * index }));
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), { ok: true });
      const list = await api(`/api/v1/conversions?receipt.between=LIVE-,LIVE-~`);
      assert.equal(list.totalEntries, index);
      const entry = list.entries.at(-1);
      assert.equal(entry.receipt, `LIVE-${index}`);
      assert.equal(entry.amount, 10 * index);
      assert.equal(entry.cart_integration, 'digistore');
      assert.equal(entry.created_at, '2026-03-02T11:15:30Z');
      assert.equal(entry.utm_source, 'newsletter');
    }
  });

  test('a notification posted twice makes one conversion and one cart event, and the repeat is answered as a success', async () => {
    const event = genericEvent('twice-1', 'TWICE-1');
    const first = await postGeneric(event);
    const second = await postGeneric(event);
    assert.deepEqual(first.json(), { ok: true });
    assert.deepEqual(second.json(), { ok: true, duplicate: true });

    const buygoods = form({ action_type: 'neworder', storecheckedoutcarts_id: '777', order_id: '290777', total_clean: '56.24', currency: 'USD' });
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await ctx.app.inject({
        method: 'POST',
        url: paths.buygoods!,
        payload: buygoods,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.body, 'OK');
    }
    for (const receipt of ['TWICE-1', '290777']) {
      assert.equal((await api(`/api/v1/conversions?receipt=${receipt}`)).totalEntries, 1, receipt);
      assert.equal((await eventsOf(`receipt=${receipt}`)).length, 1, receipt);
    }
  });

  test('notifications arriving while an import holds the conversions wait for it; on the embedded default, past 5 s, they are answered 503 and nothing is kept', async () => {
    const events = [1, 2, 3].map((index) => genericEvent(`held-${index}`, `HELD-${index}`));
    const endImport = await holdImportWrites(ctx.database, shopId);
    const sending = Promise.all(events.map((event) => postGeneric(event)));
    // PostgreSQL waits for the import's lock for as long as it is held; SQLite gives up after its busy timeout.
    if (engine === 'postgres') await new Promise((resolve) => setTimeout(resolve, 300)).finally(endImport);
    const replies = await sending.finally(() => (engine === 'sqlite' ? endImport() : undefined));
    const expected = engine === 'sqlite' ? 503 : 200;
    assert.deepEqual(
      replies.map((reply) => reply.statusCode),
      [expected, expected, expected],
      replies.map((reply) => reply.body).join(' '),
    );
    if (engine === 'sqlite') {
      assert.match(replies[0]!.json(), /busy/);
      assert.equal(replies[0]!.headers['retry-after'], '5', 'the cart is told when to send it again');
      const metrics = (await ctx.app.inject({ url: '/metrics' })).body;
      assert.match(metrics, /acds_cart_notifications_total\{cart="generic",outcome="failed"\} 3/);
      assert.equal((await eventsOf('receipt.between=HELD-,HELD-~')).length, 0);
      // The cart's retry, once the import is done, is stored.
      for (const event of events) assert.equal((await postGeneric(event)).statusCode, 200);
    }
    assert.equal((await api('/api/v1/conversions?receipt.between=HELD-,HELD-~')).totalEntries, 3);
  });

  test('notifications arriving together are each stored once: a repeat among them is one event, and two events of one receipt are one conversion', async () => {
    const sale = genericEvent('together-1', 'TOGETHER-1');
    const resent = genericEvent('together-1-resent', 'TOGETHER-1');
    const others = Array.from({ length: 8 }, (_, index) => genericEvent(`together-${index + 2}`, `TOGETHER-${index + 2}`));
    // Sent at once, the first is written alone and the others wait for its transaction, to be written together in the next.
    const replies = await Promise.all([others[0]!, sale, sale, resent, sale, ...others.slice(1), sale].map((event) => postGeneric(event)));
    assert.deepEqual(
      replies.map((reply) => reply.statusCode),
      replies.map(() => 200),
    );
    assert.equal(replies.filter((reply) => reply.json().duplicate).length, 3, 'of the four copies, three are repeats');

    const conversions = await api('/api/v1/conversions?receipt.between=TOGETHER-,TOGETHER-~');
    assert.equal(conversions.totalEntries, 9);
    const events = await eventsOf('receipt.between=TOGETHER-,TOGETHER-~');
    assert.equal(events.length, 10);
    const sold = conversions.entries.find((entry: { receipt: string }) => entry.receipt === 'TOGETHER-1');
    const ofTheSale = events.filter((event: { receipt: string }) => event.receipt === 'TOGETHER-1');
    assert.deepEqual(
      ofTheSale.map((event: { conversion_id: number }) => event.conversion_id),
      [sold.id, sold.id],
    );
    for (const entry of conversions.entries) {
      const event = events.find((candidate: { receipt: string }) => candidate.receipt === entry.receipt);
      assert.equal(event.conversion_id, entry.id, entry.receipt);
    }
  });
  test("ClickBank: the vendor's copy of a sale becomes a conversion, an affiliate's copy only an event", async () => {
    const vendor = await ctx.app.inject({ method: 'POST', url: paths.clickbank!, payload: clickbankBody(secrets.clickbank, clickbankSale('CBVEND01')) });
    assert.equal(vendor.statusCode, 200, vendor.body);
    const affiliate = await ctx.app.inject({
      method: 'POST',
      url: paths.clickbank!,
      payload: clickbankBody(secrets.clickbank, clickbankSale('CBAFF001', { role: 'AFFILIATE' })),
    });
    assert.equal(affiliate.statusCode, 200, affiliate.body);

    const [conversion] = (await api('/api/v1/conversions?receipt=CBVEND01')).entries;
    assert.equal(conversion.cart_integration, 'clickbank');
    assert.equal(conversion.created_at, '2026-03-02T18:15:30Z');
    assert.equal(conversion.user_id, 'u_1');
    assert.equal(conversion.utm_source, 'facebook');
    const [event] = await eventsOf('receipt=CBVEND01');
    assert.equal(event.status, 'converted');
    assert.equal(event.conversion_id, conversion.id);
    assert.equal(JSON.parse(event.payload).receipt, 'CBVEND01');

    assert.equal((await api('/api/v1/conversions?receipt=CBAFF001')).totalEntries, 0);
    const [ignored] = await eventsOf('receipt=CBAFF001');
    assert.equal(ignored.status, 'ignored');
    assert.match(ignored.problem, /AFFILIATE/);
  });

  test('a notification that is not genuine is refused as its cart expects, and nothing is kept', async () => {
    const forged = await postGeneric(genericEvent('forged-1', 'FORGED-1'), paths.generic, 'whsec_not_the_secret');
    assert.equal(forged.statusCode, 401);
    const wrongKey = await ctx.app.inject({ method: 'POST', url: paths.clickbank!, payload: clickbankBody(randomSecret(), clickbankSale('CBFORGED')) });
    assert.equal(wrongKey.statusCode, 400);
    for (const receipt of ['FORGED-1', 'CBFORGED']) {
      assert.equal((await eventsOf(`receipt=${receipt}`)).length, 0);
      assert.equal((await api(`/api/v1/conversions?receipt=${receipt}`)).totalEntries, 0);
    }
    const metrics = await ctx.app.inject({ url: '/metrics' });
    assert.match(metrics.body, /acds_cart_notifications_total\{cart="generic",outcome="refused"\} 1/);
  });

  test('an unknown token, or a token of another receiver, is a 404 that tells nothing', async () => {
    const token = paths.generic!.split('/').at(-1)!;
    for (const url of [`/hooks/generic/${'x'.repeat(43)}`, `/hooks/buygoods/${token}`, `/hooks/nosuchcart/${token}`]) {
      const response = await ctx.app.inject({ method: 'POST', url, payload: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(response.statusCode, 404, url);
    }
  });

  test('a cart disconnected or connected again elsewhere (the command line) takes effect at once: its old token is a 404 and nothing is kept', async () => {
    const elsewhere = new CartService(ctx.database);
    const konnektive = (path: string, fields: Record<string, string>) => ctx.app.inject({ url: `${path}?${form(fields)}` });
    const sale = (orderId: string) => ({ event: 'new_sale', order_id: orderId, total: '10.00', currency: 'USD', email: 'b@example.com' });
    const firstPath = await elsewhere.connect(shopId, 'konnektive', undefined);
    assert.equal((await konnektive(firstPath, sale('GONE-1'))).statusCode, 200);

    const secondPath = await elsewhere.connect(shopId, 'konnektive', undefined);
    assert.equal((await konnektive(firstPath, sale('GONE-2'))).statusCode, 404, 'the token replaced');
    assert.equal((await konnektive(secondPath, sale('GONE-3'))).statusCode, 200);
    assert.equal(await elsewhere.disconnect(shopId, 'konnektive'), true);
    // A postback that writes nothing (no event: a 400 while connected), then one that would.
    assert.equal((await konnektive(secondPath, { order_id: 'GONE-4' })).statusCode, 404, 'a postback kept nowhere, to a disconnected token');
    assert.equal((await konnektive(secondPath, sale('GONE-5'))).statusCode, 404, 'a sale to a disconnected token');

    const kept = await eventsOf('receipt.between=GONE-,GONE-~');
    assert.deepEqual(kept.map((event: { receipt: string }) => event.receipt).sort(), ['GONE-1', 'GONE-3']);
    assert.equal((await api('/api/v1/conversions?receipt.between=GONE-,GONE-~')).totalEntries, 2);
  });

  test("a method the cart does not send with is a 405 that names the cart's", async () => {
    const response = await ctx.app.inject({
      method: 'PUT',
      url: paths.buygoods!,
      payload: 'a=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(response.statusCode, 405);
    assert.equal(response.body, 'buygoods notifications come by GET or POST');
  });

  test('refunds, chargebacks and cancellations are events that point to the receipt they reverse', async () => {
    await postGeneric(genericEvent('sale-r', 'REFUNDED-1'));
    const refund = await postGeneric({ event_id: 'refund-r', event: 'refund', occurred_at: '2026-03-03T09:00:00Z', receipt: 'REFUNDED-1' });
    assert.equal(refund.statusCode, 200, refund.body);
    const [event] = await eventsOf('event=refund&receipt=REFUNDED-1');
    assert.equal(event.status, 'recorded');
    assert.equal(event.conversion_id, null);
    assert.equal(event.occurred_at, '2026-03-03T09:00:00Z');
    assert.equal((await api('/api/v1/conversions?receipt=REFUNDED-1')).totalEntries, 1);
  });

  test('a purchase with a field that cannot be read is kept with the reason, and the cart is told it arrived', async () => {
    const response = await postGeneric(genericEvent('bad-amount', 'BADAMOUNT-1', { amount: 'forty-nine' }));
    assert.equal(response.statusCode, 200, response.body);
    const [event] = await eventsOf('receipt=BADAMOUNT-1');
    assert.equal(event.status, 'failed');
    assert.match(event.problem, /amount/);
    assert.equal((await api('/api/v1/conversions?receipt=BADAMOUNT-1')).totalEntries, 0);
  });

  test('a NUL character, which PostgreSQL text cannot hold, is kept as U+FFFD in the event, whose purchase fails the import checks', async () => {
    const response = await postGeneric(genericEvent('nul\u0000event', 'NUL-\u00001', { first_name: 'A\u0000B', 'odd\u0000field': 'x' }));
    assert.equal(response.statusCode, 200, response.body);
    const [event] = await eventsOf(`receipt=${encodeURIComponent('NUL-\uFFFD1')}`);
    assert.equal(event.status, 'failed');
    assert.match(event.problem, /NUL/);
    assert.equal(event.receipt, 'NUL-\uFFFD1');
    for (const [name, value] of Object.entries(event)) assert.ok(!String(value).includes('\u0000'), `${name} holds no NUL`);
    assert.equal((await api(`/api/v1/conversions?receipt=${encodeURIComponent('NUL-\uFFFD1')}`)).totalEntries, 0);
  });

  test('an event id or a receipt longer than 2,048 bytes is a 400 that names it, and nothing is kept', async () => {
    for (const [event, named] of [
      [genericEvent('long-receipt', `LONG-${'r'.repeat(2044)}`), /receipt is longer than 2048 bytes/],
      [genericEvent(`long-${'e'.repeat(2044)}`, 'LONG-EVENT'), /event id is longer than 2048 bytes/],
      // 1,000 bytes as sent, 3,000 as kept: each NUL becomes U+FFFD.
      [genericEvent(`long-${'\u0000'.repeat(1000)}`, 'LONG-NUL'), /event id is longer than 2048 bytes/],
    ] as const) {
      const response = await postGeneric(event);
      assert.equal(response.statusCode, 400, response.body);
      assert.match(response.body, named);
    }
    assert.equal((await eventsOf('receipt.between=LONG-,LONG-~')).length, 0);
    assert.equal((await api('/api/v1/conversions?receipt.between=LONG-,LONG-~')).totalEntries, 0);
  });

  test('a test purchase, or an event of type test, is kept as a test event and makes no conversion', async () => {
    await postGeneric(genericEvent('test-1', 'TESTSALE-1', { test: true }));
    await postGeneric(genericEvent('test-2', 'TESTSALE-2', { event: 'test' }));
    for (const receipt of ['TESTSALE-1', 'TESTSALE-2']) {
      const [event] = await eventsOf(`receipt=${receipt}`);
      assert.deepEqual([event.test, event.status], [true, 'test'], receipt);
      assert.equal((await api(`/api/v1/conversions?receipt=${receipt}`)).totalEntries, 0, receipt);
    }
  });

  test("cart events are filtered by column with the list's filters and 400s, and each account sees only its own", async () => {
    await postGeneric(genericEvent('other-1', 'OTHER-1'), paths.otherGeneric);
    const failed = await eventsOf('status=failed');
    assert.ok(failed.length >= 1 && failed.every((event: { status: string }) => event.status === 'failed'));
    await postGeneric(genericEvent('filter-test', 'FILTERTEST-1', { test: true }));
    const tests = await eventsOf('test=true&cart=generic');
    assert.ok(tests.some((event: { receipt: string }) => event.receipt === 'FILTERTEST-1'));
    assert.ok(tests.every((event: { test: boolean; cart: string }) => event.test && event.cart === 'generic'));
    assert.equal((await eventsOf('receipt=OTHER-1')).length, 0);
    const others = await eventsOf('', otherKey);
    assert.deepEqual(
      others.map((event: { receipt: string }) => event.receipt),
      ['OTHER-1'],
    );
    const bad = await ctx.app.inject({ url: '/api/v1/cart-events?payload=x', headers: { 'x-api-key': key } });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json(), /payload/);
  });
});

describeEachEngine('cart notification limits', (engine) => {
  let ctx: TestContext;
  let path: string;
  before(async () => {
    // The API allows 2 requests a minute here; the receiver 5.
    ctx = await startTestApp(engine, { rateLimit: { max: 2, windowMs: 60_000 }, hookRateLimit: { max: 5, windowMs: 60_000 } });
    const shop = await accountWithKey(ctx.accounts, 'shop');
    path = await new CartService(ctx.database).connect(shop.accountId, 'buygoods', undefined);
  });
  after(() => ctx?.close());

  test("receivers need no API key, are not counted in the API's limit, and are limited per token", async () => {
    const statuses: number[] = [];
    for (let index = 0; index < 6; index++) {
      const payload = form({ action_type: 'refund', storecheckedoutcarts_id: String(index), order_id: String(index) });
      const response = await ctx.app.inject({ method: 'POST', url: path, payload, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      statuses.push(response.statusCode);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
  });
});
