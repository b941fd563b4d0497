import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, test } from 'node:test';
import { CartService } from '../../src/carts/service.js';
import { accountWithKey, startTestApp, type TestContext } from '../../test/helpers/app.js';
import { genericEvent, genericSignatureHeader, randomSecret } from '../../test/helpers/carts.js';
import { conversionRecord, insertConversions } from '../../test/helpers/fixtures.js';
import { AcdsClient, AcdsError, type CartReceiverEntry, type ConversionEntry, type ConversionFilters } from '../src/index.js';

/**
 * @acds/client against a real service, started here on the embedded default and listening on a
 * port: every method, lists walked past one page, uploads of each kind, 429s and errors.
 */

const SOURCES = ['facebook', 'google', 'tiktok'];
const CARTS = ['clickbank', 'digistore', 'buygoods'];
const CONVERSIONS = 260;
// A value the API's lists can hold only quoted: the fifth of the conversions have it.
const CAMPAIGN_WITH_COMMA = 'spring, "big" sale';

/** `response` whose body breaks, as a dropped connection does, after `bytes` bytes: part way through a line. */
function cutAfter(response: Response, bytes: number): Response {
  const reader = response.body!.getReader();
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done || sent + value.length > bytes) {
        if (!done) controller.enqueue(value.subarray(0, bytes - sent));
        await reader.cancel();
        controller.error(new TypeError('terminated'));
        return;
      }
      sent += value.length;
      controller.enqueue(value);
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe('@acds/client', () => {
  let ctx: TestContext;
  let baseUrl: string;
  let client: AcdsClient;
  let apiKey: string;
  let hookPath: string;
  let hookSecret: string;
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acds-client-'));

  before(async () => {
    ctx = await startTestApp('sqlite');
    baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const shop = await accountWithKey(ctx.accounts, 'shop');
    apiKey = shop.key;
    client = new AcdsClient({ baseUrl, apiKey });
    await insertConversions(
      ctx.database,
      shop.accountId,
      Array.from({ length: CONVERSIONS }, (_, index) =>
        conversionRecord({
          receipt: `C-${index}`,
          utm_source: SOURCES[index % SOURCES.length],
          utm_campaign: index % 5 === 0 ? CAMPAIGN_WITH_COMMA : 'evergreen',
          cart_integration: CARTS[index % CARTS.length],
          amount: 10 + (index % 90),
          created_at: new Date(Date.UTC(2026, 2, 1) + index * 3_600_000).toISOString().replace('.000', ''),
        }),
      ),
    );
    hookSecret = randomSecret();
    hookPath = await new CartService(ctx.database).connect(shop.accountId, 'generic', hookSecret);
  });
  after(async () => {
    await ctx?.close();
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  describe('conversions', () => {
    test('list walks every matching conversion past the first page, in id order, with filters of each kind', async () => {
      const filters = { utm_source: 'facebook', 'amount.gte': 20, 'cart_integration.in': ['clickbank', 'digistore'] };
      const walked = await collect(client.conversions.list(filters));
      const { totalEntries } = await client.conversions.page(filters);
      assert.equal(walked.length, totalEntries);
      assert.ok(totalEntries > 0);
      for (const entry of walked) {
        assert.equal(entry.utm_source, 'facebook');
        assert.ok(entry.amount !== null && entry.amount >= 20);
        assert.ok(['clickbank', 'digistore'].includes(entry.cart_integration));
      }
      const all = await collect(client.conversions.list());
      assert.equal(all.length, CONVERSIONS, 'more than two pages');
      assert.deepEqual(
        all.map((entry) => entry.id),
        all.map((entry) => entry.id).sort((a, b) => a - b),
      );
      assert.equal(new Set(all.map((entry) => entry.id)).size, CONVERSIONS, 'none twice');
    });

    test('a list filter finds a value holding a comma and quotes, sent quoted', async () => {
      const found = await collect(client.conversions.list({ 'utm_campaign.in': [CAMPAIGN_WITH_COMMA, 'nothing'] }));
      assert.equal(found.length, CONVERSIONS / 5);
      assert.ok(found.every((entry) => entry.utm_campaign === CAMPAIGN_WITH_COMMA));
    });

    test("page answers one page with the list's envelope", async () => {
      const page = await client.conversions.page({}, 3);
      assert.equal(page.page, 3);
      assert.equal(page.totalEntries, CONVERSIONS);
      assert.equal(page.totalPages, 3);
      assert.equal(page.entries.length, CONVERSIONS - 200);
    });

    test('summary sums by the keys asked, in the time zone asked', async () => {
      const summary = await client.conversions.summary({ 'created_at.gte': '2026-03-01T00:00:00Z' }, { group_by: 'day,utm_source', tz: 'Europe/Berlin' });
      assert.equal(summary.totals.conversions, CONVERSIONS);
      assert.equal(
        summary.groups.reduce((sum, group) => sum + group.conversions, 0),
        CONVERSIONS,
      );
      assert.deepEqual(summary.groups[0]!.key, { day: '2026-03-01', utm_source: 'facebook' });
    });

    test('export yields every entry of the list (NDJSON) or the CSV text', async () => {
      const exported = await collect(client.conversions.export({ utm_source: 'google' }));
      const listed = await collect(client.conversions.list({ utm_source: 'google' }));
      assert.deepEqual(exported, listed);
      const csv = (await collect(client.conversions.export({ utm_source: 'google' }, { format: 'csv' }))).join('');
      const rows = csv.trimEnd().split('\r\n');
      assert.match(rows[0]!, /^id,/);
      assert.equal(rows.length, listed.length + 1);
    });

    test('an NDJSON export broken part way goes on from the last entry received, none lost or repeated', async () => {
      const asked: string[] = [];
      const breaking = new AcdsClient({
        baseUrl,
        apiKey,
        fetch: async (input, init) => {
          asked.push(String(input));
          const response = await fetch(input, init);
          return asked.length === 1 ? cutAfter(response, 5_000) : response;
        },
      });
      const exported = await collect(breaking.conversions.export());
      assert.deepEqual(exported, await collect(client.conversions.list()));
      assert.equal(asked.length, 2);
      const resumedAfter = Number(new URL(asked[1]!).searchParams.get('id.gt'));
      assert.ok(resumedAfter >= exported[0]!.id && resumedAfter < exported.at(-1)!.id, 'the second request asks for the rest');
    });

    test('a bad filter is an AcdsError with the status, the API message and the request id', async () => {
      const error = await client.conversions.page({ 'amount.gte': 'lots' as unknown as number }).catch((caught: unknown) => caught);
      assert.ok(error instanceof AcdsError);
      assert.equal(error.status, 400);
      assert.match(error.message, /amount/);
      assert.match(error.requestId ?? '', /.+/);
    });
  });

  describe('assets', () => {
    test('create from text, bytes, a Blob, a stream and a file path; get, list and content read them back', async () => {
      const bytes = new TextEncoder().encode('body { color: red }');
      const filePath = path.join(workDir, 'from-disk.js');
      fs.writeFileSync(filePath, 'console.log("from disk")');
      const ids = [
        await client.assets.create({ name: 'hello.txt', content: 'hello', folder: 'texts' }),
        await client.assets.create({ file: bytes, fileName: 'red.css', folder: 'styles' }),
        await client.assets.create({ file: new Blob(['<svg/>'], { type: 'image/svg+xml' }), fileName: 'logo.svg', folder: 'images' }),
        await client.assets.create({ file: Readable.from([Buffer.from('line one\n'), Buffer.from('line two\n')]), fileName: 'streamed.txt', folder: 'texts' }),
        await client.assets.create({ file: filePath, folder: 'scripts', defer: true }),
      ];
      const made = await Promise.all(ids.map((id) => client.assets.get(id)));
      assert.deepEqual(
        made.map((asset) => [asset.name, asset.folder]),
        [
          ['hello.txt', 'texts'],
          ['red.css', 'styles'],
          ['logo.svg', 'images'],
          ['streamed.txt', 'texts'],
          ['from-disk.js', 'scripts'],
        ],
      );
      assert.equal(made[2]!.image, true);
      assert.equal(made[4]!.defer, true);
      assert.equal(new TextDecoder().decode(await client.assets.content(ids[3]!)), 'line one\nline two\n');
      assert.equal(new TextDecoder().decode(await client.assets.content(ids[4]!)), 'console.log("from disk")');
      assert.deepEqual(await client.assets.content(ids[1]!), bytes);
      const texts = await collect(client.assets.list({ folder: 'texts' }));
      assert.deepEqual(
        texts.map((asset) => asset.name),
        ['hello.txt', 'streamed.txt'],
      );
    });

    test('update renames, moves and replaces the content; delete removes; a missing asset is a 404 AcdsError', async () => {
      const id = await client.assets.create({ name: 'draft.txt', content: 'first' });
      await client.assets.update(id, { name: 'final.txt' });
      await client.assets.update(id, { folder: 'texts' });
      await client.assets.update(id, { content: 'second' });
      const updated = await client.assets.get(id);
      assert.deepEqual([updated.name, updated.folder], ['final.txt', 'texts']);
      assert.equal(new TextDecoder().decode(await client.assets.content(id)), 'second');
      await client.assets.delete(id);
      const error = await client.assets.get(id).catch((caught: unknown) => caught);
      assert.ok(error instanceof AcdsError);
      assert.equal(error.status, 404);
    });

    test("a remote asset's content is read from its url, without the API key, which is for the service alone", async () => {
      const seen: http.IncomingHttpHeaders[] = [];
      const remote = http.createServer((request, response) => {
        seen.push(request.headers);
        response.end('remote bytes');
      });
      await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
      try {
        // localhost: another origin than the service's 127.0.0.1.
        const url = `http://localhost:${(remote.address() as AddressInfo).port}/banner.png`;
        const id = await client.assets.create({ name: 'banner.png', url });
        assert.equal(new TextDecoder().decode(await client.assets.content(id)), 'remote bytes');
        assert.equal(seen.length, 1);
        assert.equal(seen[0]!['x-api-key'], undefined);
      } finally {
        remote.close();
      }
    });

    test('lists more than a page of assets', async () => {
      for (let index = 0; index < 105; index++) await client.assets.create({ name: `bulk-${index}.txt`, content: String(index), folder: 'bulk' });
      const bulk = await collect(client.assets.list({ folder: 'bulk' }));
      assert.equal(bulk.length, 105);
      assert.equal((await client.assets.page({ folder: 'bulk' }, 2)).entries.length, 5);
    });
  });

  test('cart events: the notifications the receivers stored', async () => {
    const body = JSON.stringify(genericEvent('evt-client-1', 'R-CLIENT-1'));
    const response = await fetch(`${baseUrl}${hookPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': genericSignatureHeader(hookSecret, body) },
      body,
    });
    assert.equal(response.status, 200, await response.text());
    const events = await collect(client.cartEvents.list({ cart: 'generic' }));
    assert.deepEqual(
      events.map((event) => [event.event, event.receipt, event.status]),
      [['sale', 'R-CLIENT-1', 'converted']],
    );
    assert.equal((await client.cartEvents.page()).totalEntries, 1);
  });

  test("cart receivers: the connected carts, each path with only the token's first characters", async () => {
    const receivers = await client.cartReceivers.list();
    assert.equal(receivers.length, 1);
    const [receiver] = receivers;
    assert.equal(receiver!.cart, 'generic');
    assert.ok(receiver!.path.startsWith('/hooks/generic/') && receiver!.path.endsWith('…'), receiver!.path);
    assert.ok(hookPath.startsWith(receiver!.path.slice(0, -1)) && receiver!.path.length < hookPath.length, `${receiver!.path} of ${hookPath}`);
    assert.match(receiver!.connected_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const stranger = new AcdsClient({ baseUrl, apiKey: (await accountWithKey(ctx.accounts, 'stranger')).key });
    assert.deepEqual(await stranger.cartReceivers.list(), []);
  });

  test('a wrong API key is a 401 AcdsError', async () => {
    const stranger = new AcdsClient({ baseUrl, apiKey: 'acds_not-a-key' });
    const error = await stranger.conversions.page().catch((caught: unknown) => caught);
    assert.ok(error instanceof AcdsError);
    assert.equal(error.status, 401);
    assert.equal(error.message, 'invalid API key');
  });

  test('a service that cannot be reached is an AcdsError of status 0, after the retries a GET may have', async () => {
    let tries = 0;
    const unreachable = new AcdsClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'acds_whatever',
      fetch: (input, init) => {
        tries += 1;
        return fetch(input, init);
      },
    });
    const error = await unreachable.assets.get(1).catch((caught: unknown) => caught);
    assert.ok(error instanceof AcdsError);
    assert.equal(error.status, 0);
    assert.equal(tries, 3, 'the first try and two retries');
    tries = 0;
    await unreachable.assets.create({ name: 'a.txt', content: 'a' }).catch(() => {});
    assert.equal(tries, 1, 'a POST is never repeated after a network failure');
  });
});

describe('@acds/client and the rate limit', () => {
  let ctx: TestContext;
  let baseUrl: string;
  let key: string;
  before(async () => {
    ctx = await startTestApp('sqlite', { rateLimit: { max: 2, windowMs: 1_500 } });
    baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    key = (await accountWithKey(ctx.accounts, 'shop')).key;
  });
  after(() => ctx?.close());

  test("a 429 is waited out by the service's Retry-After, told to onRateLimitWait first, and the call answers", async () => {
    const waits: number[] = [];
    const client = new AcdsClient({ baseUrl, apiKey: key, onRateLimitWait: (seconds) => waits.push(seconds) });
    const began = Date.now();
    const pages = [];
    for (let index = 0; index < 3; index++) pages.push(await client.conversions.page());
    assert.equal(pages.length, 3);
    assert.ok(Date.now() - began >= 500, 'the third waited for the window to end');
    // The window is 1.5 s: each wait told is the service's Retry-After, a whole second or two.
    assert.ok(waits.length >= 1 && waits.every((seconds) => seconds >= 1 && seconds <= 2), `told of waits: ${waits.join(', ')}`);
  });
});

// A window no test outlasts, so that a refusal still stands when the next call is made.
describe('@acds/client and a rate limit spent for the minute', () => {
  let ctx: TestContext;
  let baseUrl: string;
  let key: string;
  before(async () => {
    ctx = await startTestApp('sqlite', { rateLimit: { max: 2, windowMs: 60_000 } });
    baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    key = (await accountWithKey(ctx.accounts, 'shop')).key;
  });
  after(() => ctx?.close());

  test('a 429 is thrown at once when the call says not to wait, or the wait would be too long', async () => {
    const noWaiting = new AcdsClient({ baseUrl, apiKey: key });
    const patient = new AcdsClient({ baseUrl, apiKey: key, maxRateLimitWaitSeconds: 0 });
    let answered = 0;
    let refused: unknown;
    for (let index = 0; index < 4 && !refused; index++) {
      await noWaiting.conversions
        .page({}, 1, { waitOutRateLimit: false })
        .then(() => answered++)
        .catch((error: unknown) => {
          refused = error;
        });
    }
    assert.ok(refused instanceof AcdsError);
    assert.equal(refused.status, 429);
    assert.match(refused.message, /too many requests; the service asks to wait \d+ s/);
    assert.equal(answered, 2);
    const error = await patient.conversions.page().catch((caught: unknown) => caught);
    assert.ok(error instanceof AcdsError && error.status === 429);
  });
});

/**
 * A stand-in for the service on node:http, for what the real one cannot be made to do: a
 * Retry-After under a second, a 429 to an upload, and the very URL each request came with.
 */
describe('@acds/client against a stand-in server', () => {
  /** What the stand-in was asked: each request's method, URL (path and query as they came) and body. */
  const asked: { method: string; url: string; body: string }[] = [];
  /** How the stand-in answers the request just added to `asked`; set by each test. */
  let answer: (response: http.ServerResponse) => void;
  let server: http.Server;
  let baseUrl: string;

  function reply(response: http.ServerResponse, status: number, body = '', headers: Record<string, string> = {}): void {
    response.writeHead(status, { 'x-request-id': 'stand-in', ...headers });
    response.end(body);
  }
  function replyJson(response: http.ServerResponse, status: number, value: unknown): void {
    reply(response, status, JSON.stringify(value), { 'content-type': 'application/json' });
  }
  const emptyPage = { entries: [], totalEntries: 0, page: 1, totalPages: 1 };

  before(async () => {
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        asked.push({ method: request.method!, url: request.url!, body: Buffer.concat(chunks).toString() });
        answer(response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    asked.length = 0;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('null and undefined query values are left out of the URL of list, page, summary and export, while 0 and empty text are sent', async () => {
    answer = (response) => {
      const { pathname } = new URL(asked.at(-1)!.url, baseUrl);
      if (pathname === '/api/v1/conversions') return replyJson(response, 200, emptyPage);
      if (pathname === '/api/v1/conversions/summary') return replyJson(response, 200, { totals: { conversions: 0 }, groups: [] });
      reply(response, 200);
    };
    const client = new AcdsClient({ baseUrl, apiKey: 'acds_stand-in' });
    const filters: ConversionFilters = {
      utm_source: 'facebook',
      utm_medium: undefined,
      utm_campaign: null as unknown as string,
      'amount.gte': 0,
      utm_content: '',
    };
    await collect(client.conversions.list(filters));
    await client.conversions.page(filters, 2);
    await client.conversions.summary({ utm_source: 'google', utm_medium: null as unknown as string }, { group_by: undefined, tz: null as unknown as string });
    await client.conversions.summary();
    await collect(client.conversions.export({ utm_source: undefined }));
    await collect(client.conversions.export({ utm_campaign: null as unknown as string }, { format: 'csv' }));
    assert.deepEqual(
      asked.map(({ url }) => url),
      [
        '/api/v1/conversions?utm_source=facebook&amount.gte=0&utm_content=&page=1',
        '/api/v1/conversions?utm_source=facebook&amount.gte=0&utm_content=&page=2',
        '/api/v1/conversions/summary?utm_source=google',
        '/api/v1/conversions/summary',
        // The NDJSON export adds an id.gt of its own, undefined until it resumes: left out too.
        '/api/v1/conversions/export?format=ndjson',
        '/api/v1/conversions/export?format=csv',
      ],
    );
  });

  test('a list value holding a comma, a quote or nothing is quoted as in CSV, so that the API reads each value whole', async () => {
    answer = (response) => replyJson(response, 200, emptyPage);
    const client = new AcdsClient({ baseUrl, apiKey: 'acds_stand-in' });
    await client.conversions.page({ 'utm_campaign.in': ['spring, "big" sale', 'plain', ''], 'amount.between': [10, 20] });
    const { searchParams } = new URL(asked[0]!.url, baseUrl);
    assert.equal(searchParams.get('utm_campaign.in'), '"spring, ""big"" sale",plain,""');
    assert.equal(searchParams.get('amount.between'), '10,20');
  });

  test('a 429 whose Retry-After is under a second (0.2) is waited out for a whole second, then the call is sent again and answers', async () => {
    answer = (response) => (asked.length === 1 ? reply(response, 429, '', { 'retry-after': '0.2' }) : replyJson(response, 200, emptyPage));
    const waits: number[] = [];
    const client = new AcdsClient({ baseUrl, apiKey: 'acds_stand-in', onRateLimitWait: (seconds) => waits.push(seconds) });
    const began = performance.now();
    const page = await client.conversions.page();
    const took = performance.now() - began;
    assert.deepEqual(page, emptyPage);
    assert.equal(asked.length, 2, 'refused once, then sent again');
    assert.deepEqual(waits, [1], 'told of a whole second');
    assert.ok(took >= 950, `waited ${Math.round(took)} ms: a second, not 0.2 s`);
  });

  test('a Retry-After of 0 still counts a second towards maxRateLimitWaitSeconds: a service that keeps refusing is not asked again and again', async () => {
    // Answers after five refusals: a client that took 0 as no wait at all would get there, and answer.
    answer = (response) => (asked.length <= 5 ? reply(response, 429, '', { 'retry-after': '0' }) : replyJson(response, 200, emptyPage));
    const waits: number[] = [];
    const client = new AcdsClient({ baseUrl, apiKey: 'acds_stand-in', maxRateLimitWaitSeconds: 2, onRateLimitWait: (seconds) => waits.push(seconds) });
    const error = await client.conversions.page().catch((caught: unknown) => caught);
    assert.ok(error instanceof AcdsError, String(error));
    assert.equal(error.status, 429);
    assert.equal(error.message, 'too many requests; the service asks to wait 0 s', 'the wait the service asked for, not the one the client counted');
    assert.equal(error.requestId, 'stand-in');
    assert.deepEqual(waits, [1, 1], 'two waits of a second fill the two seconds allowed');
    assert.equal(asked.length, 3, 'the first try and two more');
  });

  test('a 429 to a streamed upload is thrown at once, the stream sent only once; an upload from bytes is waited out and sent again', async () => {
    let refusals = 0;
    answer = (response) => (refusals-- > 0 ? reply(response, 429, '', { 'retry-after': '1' }) : replyJson(response, 201, { id: '7' }));
    const waits: number[] = [];
    const client = new AcdsClient({ baseUrl, apiKey: 'acds_stand-in', onRateLimitWait: (seconds) => waits.push(seconds) });

    refusals = 1;
    const created = await client.assets
      .create({ file: Readable.from([Buffer.from('line one\n'), Buffer.from('line two\n')]), fileName: 'streamed.txt' })
      .catch((caught: unknown) => caught);
    assert.ok(created instanceof AcdsError, String(created));
    assert.equal(created.status, 429);
    assert.equal(created.message, 'too many requests; the service asks to wait 1 s');
    assert.deepEqual(
      asked.map(({ method }) => method),
      ['POST'],
    );
    assert.match(asked[0]!.body, /filename="streamed\.txt"[\s\S]*line one\nline two\n/, 'the stream was sent whole, once');

    refusals = 1;
    const updated = await client.assets.update(7, { file: new Blob(['replaced']).stream(), fileName: 'streamed.txt' }).catch((caught: unknown) => caught);
    assert.ok(updated instanceof AcdsError, String(updated));
    assert.equal(updated.status, 429);
    assert.deepEqual(
      asked.map(({ method, url }) => `${method} ${url}`),
      ['POST /api/v1/assets', 'PUT /api/v1/assets/7'],
    );
    assert.deepEqual(waits, [], 'no wait for a stream');

    refusals = 1;
    assert.equal(await client.assets.create({ file: new TextEncoder().encode('from bytes'), fileName: 'bytes.txt' }), 7);
    assert.deepEqual(waits, [1]);
    assert.equal(asked.length, 4, 'the bytes sent twice');
    assert.ok(
      asked.slice(2).every(({ body }) => body.includes('from bytes')),
      'each try carried the file',
    );
  });
});

/** Checked by tsc, never run: filters are typed per column and modifier. */
export function typeChecks(client: AcdsClient): void {
  void client.conversions.list({ utm_source: 'facebook', 'amount.gte': 50, 'cart_integration.in': ['clickbank', 'digistore'] });
  // @ts-expect-error a misspelt column
  void client.conversions.list({ utm_sorce: 'facebook' });
  // @ts-expect-error a modifier the column does not have
  void client.conversions.list({ 'mobile.gte': true });
  // @ts-expect-error a number column takes numbers
  void client.conversions.list({ 'amount.gte': 'fifty' });
  const entry: ConversionEntry | undefined = undefined;
  void entry;
  // @ts-expect-error a receiver's cart is one of the receivers
  const receiver: CartReceiverEntry = { cart: 'shopify', path: '/hooks/shopify/ab12cd…', connected_at: '2026-03-01T00:00:00Z' };
  void receiver;
}
