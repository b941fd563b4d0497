import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse/sync';
import { type TestContext, accountWithKey, startTestApp } from '../helpers/app.js';
import { describeEachEngine } from '../helpers/database.js';
import { CONVERSION_FIELDS, conversionRecord, insertConversions } from '../helpers/fixtures.js';

/**
 * GET /api/v1/conversions/export: every matching conversion, in id order, as the list pages
 * have them, in NDJSON or CSV, streamed, resumable with id.gt.
 */

type Entry = Record<string, unknown>;

const SOURCES = ['facebook', 'google', null];

/** Enough conversions for several of the export's batches, with text that CSV must quote. */
function records(count: number, prefix: string): Entry[] {
  return Array.from({ length: count }, (_, index) =>
    conversionRecord({
      receipt: `${prefix}-${index}`,
      utm_source: SOURCES[index % SOURCES.length],
      amount: (index % 500) + 0.5,
      mobile: index % 4 === 0 ? null : index % 2 === 0,
      first_name: index % 7 === 0 ? 'Anne, "the buyer"\nSmith' : 'Anne',
      tracking_codes: index % 3 === 0 ? [] : ['tc-a', `tc-${index % 5}`],
    }),
  );
}

describeEachEngine('conversion export', (engine) => {
  let ctx: TestContext;
  let key: string;
  let otherKey: string;
  before(async () => {
    ctx = await startTestApp(engine);
    const shop = await accountWithKey(ctx.accounts, 'shop');
    key = shop.key;
    const other = await accountWithKey(ctx.accounts, 'other');
    otherKey = other.key;
    await insertConversions(ctx.database, shop.accountId, records(4_500, 'E'));
    await insertConversions(ctx.database, other.accountId, records(30, 'O'));
  });
  after(() => ctx?.close());

  const get = (url: string, headers: Record<string, string> = {}, apiKey = key) => ctx.app.inject({ url, headers: { 'x-api-key': apiKey, ...headers } });

  /** Every entry of the list for these filters, page by page. */
  async function listed(query: string, apiKey = key): Promise<Entry[]> {
    const entries: Entry[] = [];
    for (let page = 1; ; page++) {
      const response = await get(`/api/v1/conversions?${query}${query ? '&' : ''}page=${page}`, {}, apiKey);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      entries.push(...body.entries);
      if (page >= body.totalPages) return entries;
    }
  }

  const ndjsonLines = (body: string): Entry[] => {
    assert.ok(body === '' || body.endsWith('\n'), 'every line ends with a line feed');
    return body
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
  };

  test("the list's Link headers walk the same pages: next from the first to the last, prev back, first and last on each", async () => {
    const query = 'utm_source=facebook';
    const relations = (response: { headers: Record<string, unknown> }) =>
      Object.fromEntries(
        String(response.headers.link)
          .split(', ')
          .map((link) => {
            const [, url, rel] = /^<([^>]+)>; rel="(\w+)"$/.exec(link)!;
            return [rel, url];
          }),
      );
    const walked: Entry[] = [];
    const visited: string[] = [];
    let url: string | undefined = `/api/v1/conversions?${query}`;
    while (url) {
      const response = await get(url);
      assert.equal(response.statusCode, 200, response.body);
      walked.push(...response.json().entries);
      const links = relations(response);
      assert.equal(links.first, '/api/v1/conversions?utm_source=facebook&page=1');
      assert.equal(links.last, `/api/v1/conversions?utm_source=facebook&page=${response.json().totalPages}`);
      if (visited.length > 0) assert.equal(links.prev, visited.at(-1)!.includes('page=') ? visited.at(-1) : links.first);
      visited.push(url);
      url = links.next;
    }
    assert.ok(visited.length > 10, `${visited.length} pages`);
    assert.deepEqual(walked, await listed(query));
    assert.equal((await get('/api/v1/conversions?receipt=none')).headers.link, undefined, 'no link when nothing matches');
  });

  test('NDJSON: every matching conversion, each line the entry the list pages have, in id order', async () => {
    for (const query of ['', 'utm_source=facebook&amount.gte=100', 'tracking_codes=tc-a&mobile=true']) {
      const response = await get(`/api/v1/conversions/export?${query}`);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], 'application/x-ndjson; charset=utf-8');
      assert.match(String(response.headers['content-disposition']), /^attachment; filename="conversions-\d{4}-\d\d-\d\d\.ndjson"$/);
      assert.deepEqual(ndjsonLines(response.body), await listed(query), query);
    }
  });

  test("CSV: a header of every field, then one row per conversion with the list entry's values; arrays as JSON, null empty", async () => {
    const query = 'utm_source=facebook';
    const response = await get(`/api/v1/conversions/export?${query}&format=csv`);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
    assert.match(String(response.headers['content-disposition']), /filename="conversions-\d{4}-\d\d-\d\d\.csv"/);
    const [header, ...rows] = parseCsv(response.body) as string[][];
    const entries = await listed(query);
    assert.deepEqual(header, CONVERSION_FIELDS, 'the header names every field, in the entry order');
    assert.equal(rows.length, entries.length);
    const cell = (value: unknown) => (value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));
    rows.forEach((row, index) => {
      assert.deepEqual(
        row,
        header!.map((name) => cell(entries[index]![name])),
        `row ${index + 1}`,
      );
    });
    assert.ok(
      rows.some((row) => row.includes('Anne, "the buyer"\nSmith')),
      'a value with a comma, quotes and a line break survives',
    );
  });

  test('the Accept header chooses CSV when format is absent; format wins over it', async () => {
    assert.equal((await get('/api/v1/conversions/export?utm_source=google', { accept: 'text/csv' })).headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(
      (await get('/api/v1/conversions/export?format=ndjson', { accept: 'text/csv' })).headers['content-type'],
      'application/x-ndjson; charset=utf-8',
    );
  });

  for (const [accept, format] of [
    ['text/csv;q=0, application/x-ndjson', 'ndjson'],
    ['application/x-ndjson, text/csv;q=0.1', 'ndjson'],
    ['text/csv;q=0.9, application/x-ndjson;q=0.5', 'csv'],
    ['text/*', 'csv'],
    ['*/*', 'ndjson'],
    ['text/csv-foo', 'ndjson'],
    ['text/html', 'ndjson'],
    ['text/csv; charset=utf-8', 'csv'],
    ['text/csv;header=present', 'csv'],
    ['application/x-ndjson; charset=utf-8, text/csv;q=0.9', 'ndjson'],
  ]) {
    test(`Accept: ${accept} gets ${format}, by its q-values`, async () => {
      const response = await get('/api/v1/conversions/export?utm_source=nobody', { accept: accept! });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
    });
  }

  test("a HEAD has the GET's headers and no body", async () => {
    const head = await ctx.app.inject({ method: 'HEAD', url: '/api/v1/conversions/export?format=csv', headers: { 'x-api-key': key } });
    const full = await get('/api/v1/conversions/export?format=csv');
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    for (const name of ['content-type', 'content-disposition', 'cache-control', 'vary', 'content-length'])
      assert.equal(head.headers[name], full.headers[name], name);
    assert.equal(full.headers['cache-control'], 'private, no-store');
    const gzipped = { 'accept-encoding': 'gzip' };
    const headGzipped = await ctx.app.inject({ method: 'HEAD', url: '/api/v1/conversions/export?format=csv', headers: { 'x-api-key': key, ...gzipped } });
    const fullGzipped = await get('/api/v1/conversions/export?format=csv', gzipped);
    assert.equal(fullGzipped.headers['content-encoding'], 'gzip');
    for (const name of ['content-encoding', 'vary']) assert.equal(headGzipped.headers[name], fullGzipped.headers[name], `${name}, gzip accepted`);
    const bad = await ctx.app.inject({ method: 'HEAD', url: '/api/v1/conversions/export?format=xml', headers: { 'x-api-key': key } });
    assert.equal(bad.statusCode, 400);
  });

  test('a broken download resumes with id.gt: the rest, exactly', async () => {
    const all = ndjsonLines((await get('/api/v1/conversions/export')).body);
    const cut = all[2_345]!.id as number;
    const rest = ndjsonLines((await get(`/api/v1/conversions/export?id.gt=${cut}`)).body);
    assert.deepEqual(rest, all.slice(2_346));
  });

  test('compressed with gzip when the client accepts it', async () => {
    const plain = (await get('/api/v1/conversions/export?utm_source=google')).body;
    const response = await get('/api/v1/conversions/export?utm_source=google', { 'accept-encoding': 'gzip, deflate' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(response.rawPayload).toString('utf8'), plain);
    const refused = await get('/api/v1/conversions/export?utm_source=google', { 'accept-encoding': 'gzip;q=0, identity' });
    assert.equal(refused.headers['content-encoding'], undefined, 'gzip;q=0 refuses gzip');
    assert.equal(refused.body, plain);
  });

  test('a list page, too, is gzipped when the client accepts it, and is then a tenth of its size or less', async () => {
    const plain = await get('/api/v1/conversions?page=2');
    const zipped = await get('/api/v1/conversions?page=2', { 'accept-encoding': 'br, gzip' });
    assert.equal(zipped.statusCode, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.match(String(zipped.headers.vary), /accept-encoding/i);
    assert.equal(gunzipSync(zipped.rawPayload).toString('utf8'), plain.body);
    assert.ok(zipped.rawPayload.length * 10 <= plain.rawPayload.length, `${zipped.rawPayload.length} bytes gzipped of ${plain.rawPayload.length}`);
    // Compressed in one call, not streamed: its length is known.
    assert.equal(Number(zipped.headers['content-length']), zipped.rawPayload.length);
    assert.equal(plain.headers['content-encoding'], undefined);
  });

  test("another account's conversions are never exported, and nothing matching is an empty export", async () => {
    assert.deepEqual(
      ndjsonLines((await get('/api/v1/conversions/export', {}, otherKey)).body).map((entry) => entry.receipt),
      (await listed('', otherKey)).map((entry) => entry.receipt),
    );
    const none = await get('/api/v1/conversions/export?utm_source=nobody');
    assert.equal(none.statusCode, 200);
    assert.equal(none.body, '');
    const noneCsv = await get('/api/v1/conversions/export?utm_source=nobody&format=csv');
    assert.equal(noneCsv.body.split('\r\n').filter(Boolean).length, 1, 'the header alone');
  });

  for (const [query, message] of [
    ['format=xml', /format must be ndjson or csv, not xml/],
    ['page=2', /page is not a known parameter; use format or a filter on one of: /],
    ['amount.gte=cheap', /amount/],
  ] as const) {
    test(`?${query} is a 400 saying what to fix`, async () => {
      const response = await get(`/api/v1/conversions/export?${query}`);
      assert.equal(response.statusCode, 400, response.body);
      assert.match(response.json(), message);
    });
  }

  test('a client that stops reading part way leaves no connection open, and the service answers on', async () => {
    const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const received = await new Promise<number>((resolve, reject) => {
      const request = http.get({ host: '127.0.0.1', port, path: '/api/v1/conversions/export', headers: { 'x-api-key': key } }, (response) => {
        let bytes = 0;
        response.once('data', (chunk: Buffer) => {
          bytes += chunk.length;
          request.destroy();
          resolve(bytes);
        });
      });
      request.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
    });
    assert.ok(received > 0);
    for (let tries = 0; ; tries++) {
      const open = await new Promise<number>((resolve) => ctx.app.server.getConnections((_, count) => resolve(count)));
      const pool = ctx.database.poolStats();
      if (open === 0 && (pool === undefined || (pool.waiting === 0 && pool.idle === pool.total))) break;
      assert.ok(tries < 50, `connections still open 5 s after the client left: ${open} to the service, pool ${JSON.stringify(pool)}`);
      await sleep(100);
    }
    const after = await get('/api/v1/conversions/export?utm_source=google');
    assert.equal(after.statusCode, 200);
  });
});
