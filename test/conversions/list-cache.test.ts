import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine } from '../helpers/database.js';
import { conversionRecord, insertConversions } from '../helpers/fixtures.js';

/**
 * Listing remembers counts and page boundaries per filter, so that a repeated list request on a
 * large account skips the count (docs/api.md, "Listing"). These tests prove that what it
 * remembers never shows: after every import and asset write the totals are exact at once, and
 * every page, asked in any order, walking the rows in id order or reading a filter's index,
 * holds exactly the rows the data says.
 */

interface Page {
  entries: { id: number; receipt: string; amount: number; user_id: string; cart_integration: string; created_at: string }[];
  totalEntries: number;
  totalPages: number;
}

const CARTS = ['clickbank', 'digistore', 'buygoods'];

/** Records: most with amount 10, every tenth 500; three carts in turn; user u7 on every fiftieth; a day of March 2026 in turn. */
function records(count: number, tag: string): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, index) =>
    conversionRecord({
      receipt: `${tag}-${index}`,
      created_at: `2026-03-${String(1 + (index % 28)).padStart(2, '0')}T12:00:00Z`,
      amount: index % 10 === 0 ? 500 : 10,
      cart_integration: CARTS[index % CARTS.length],
      user_id: index % 50 === 0 ? 'u7' : `u-${tag}-${index}`,
    }),
  );
}

describeEachEngine('list counts and pages stay exact', (engine) => {
  let ctx: TestContext;
  let apiKey: string;
  let accountId: number;
  const list = async (query: string, key = apiKey): Promise<Page> => {
    const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/conversions?${query}`, headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200, response.body);
    return response.json();
  };
  /** Every row of the account, from the unfiltered pages, in id order. */
  const everyRow = async () => {
    const first = await list('');
    const rest = await Promise.all(Array.from({ length: first.totalPages - 1 }, (_, index) => list(`page=${index + 2}`)));
    return [first, ...rest].flatMap((page) => page.entries);
  };

  before(async () => {
    ctx = await startTestApp(engine);
    ({ key: apiKey, accountId } = await accountWithKey(ctx.accounts, 'lists'));
    await insertConversions(ctx.database, accountId, records(340, 'first'));
  });
  after(() => ctx.close());

  const filters = [
    { query: 'amount.gte=5', why: 'matches nearly every row (pages walk the rows in id order)', keep: (_: Page['entries'][number]) => true },
    { query: 'amount=500', why: 'matches a tenth of the rows', keep: (row: Page['entries'][number]) => row.amount === 500 },
    {
      query: 'cart_integration.in=clickbank,buygoods',
      why: 'matches two thirds',
      keep: (row: Page['entries'][number]) => row.cart_integration !== 'digistore',
    },
    { query: 'user_id=u7', why: 'matches a few rows (pages read the index)', keep: (row: Page['entries'][number]) => row.user_id === 'u7' },
    {
      query: 'cart_integration.in=clickbank,buygoods&amount.gte=5',
      why: 'filters two columns that each match most rows (counted walking the rows)',
      keep: (row: Page['entries'][number]) => row.cart_integration !== 'digistore',
    },
    {
      query: 'cart_integration=clickbank&created_at.gte=2026-03-08&created_at.lt=2026-03-15',
      why: "pairs an equality with a date range (counted in the equality's index, which carries the date)",
      keep: (row: Page['entries'][number]) => row.cart_integration === 'clickbank' && row.created_at >= '2026-03-08' && row.created_at < '2026-03-15',
    },
    {
      query: 'cart_integration=clickbank&amount=10',
      why: "pairs an equality with a broad filter (early pages walk the equality's index)",
      keep: (row: Page['entries'][number]) => row.cart_integration === 'clickbank' && row.amount === 10,
    },
  ];

  for (const { query, why, keep } of filters) {
    test(`${query}, which ${why}: every page, asked in any order and again, holds the rows the data says`, async () => {
      const expected = (await everyRow()).filter(keep);
      const totalPages = Math.ceil(expected.length / 100);
      for (const page of [3, 1, 4, 2, 3, 5, 1, 4]) {
        const answer = await list(`${query}&page=${page}`);
        assert.equal(answer.totalEntries, expected.length, `totalEntries of page ${page}`);
        assert.equal(answer.totalPages, totalPages);
        assert.deepEqual(
          answer.entries.map((entry) => entry.id),
          expected.slice((page - 1) * 100, page * 100).map((entry) => entry.id),
          `page ${page}`,
        );
      }
    });
  }

  test('an import shows in the very next listing: new totals, and deep pages that include the new rows', async () => {
    const before = await list('amount=500&page=2');
    const beforeAll = await list('page=4');
    await insertConversions(ctx.database, accountId, records(120, 'second'));
    const after = await list('amount=500&page=2');
    assert.equal(after.totalEntries, before.totalEntries + 12);
    const rows = await everyRow();
    assert.equal(rows.length, beforeAll.totalEntries + 120);
    assert.deepEqual(
      (await list('page=4')).entries.map((entry) => entry.id),
      rows.slice(300, 400).map((entry) => entry.id),
      'page 4, which was short before the import, is full now',
    );
    assert.deepEqual(
      after.entries.map((entry) => entry.id),
      rows
        .filter((row) => row.amount === 500)
        .slice(100, 200)
        .map((entry) => entry.id),
    );
  });

  test("another account's import leaves this account's totals alone, and theirs are exact", async () => {
    const other = await accountWithKey(ctx.accounts, 'lists-other');
    const mine = await list('amount=500');
    assert.equal((await list('amount=500', other.key)).totalEntries, 0);
    await insertConversions(ctx.database, other.accountId, records(30, 'other'));
    assert.equal((await list('amount=500', other.key)).totalEntries, 3);
    assert.equal((await list('amount=500')).totalEntries, mine.totalEntries);
  });

  test("pages walked in id order, and counts of broad filters, hold the account's own rows only, whether its ids are dense or interleaved with others'", async () => {
    const dense = await accountWithKey(ctx.accounts, 'walk-dense');
    const sparse = await accountWithKey(ctx.accounts, 'walk-sparse');
    const neighbour = await accountWithKey(ctx.accounts, 'walk-neighbour');
    const imported = new Map<number, string[]>([
      [dense.accountId, []],
      [sparse.accountId, []],
      [neighbour.accountId, []],
    ]);
    const add = async (accountId: number, tag: string, count: number) => {
      const batch = records(count, tag);
      await insertConversions(ctx.database, accountId, batch);
      imported.get(accountId)!.push(...batch.map((record) => String(record.receipt)));
    };
    // The dense account owns most ids of its span (the table is walked); the sparse one a third (its index is).
    await add(dense.accountId, 'dense-a', 200);
    await add(neighbour.accountId, 'between', 20);
    await add(dense.accountId, 'dense-b', 150);
    for (let round = 0; round < 4; round++) {
      await add(sparse.accountId, `sparse-${round}`, 40);
      await add(neighbour.accountId, `neighbour-${round}`, 80);
    }
    for (const { accountId, key } of [dense, sparse]) {
      const receipts = imported.get(accountId)!;
      for (const [query, keep] of [
        ['', () => true],
        ['amount.gte=5', () => true],
        ['cart_integration.in=clickbank,buygoods', (index: number) => index % CARTS.length !== 1],
        ['cart_integration.in=clickbank,buygoods&amount.gte=5', (index: number) => index % CARTS.length !== 1],
      ] as const) {
        // records() cycles the carts by position within each batch; recompute from the receipt's index.
        const expected = receipts.filter((receipt) => keep(Number(receipt.slice(receipt.lastIndexOf('-') + 1))));
        for (let page = 1; page <= Math.ceil(expected.length / 100); page++) {
          const answer = await list(`${query}&page=${page}`, key);
          assert.equal(answer.totalEntries, expected.length);
          assert.deepEqual(
            answer.entries.map((entry) => entry.receipt),
            expected.slice((page - 1) * 100, page * 100),
            `account ${accountId}, ${query || 'no filter'}, page ${page}`,
          );
        }
      }
    }
  });

  test('asset creates and deletes show in the very next asset listing', async () => {
    const headers = { 'x-api-key': apiKey };
    const count = async () => {
      const response = await ctx.app.inject({ method: 'GET', url: '/api/v1/assets?folder=counted&text=t', headers });
      assert.equal(response.statusCode, 200, response.body);
      return (response.json() as Page).totalEntries;
    };
    const create = async (name: string) => {
      const form = new FormData();
      form.append('name', name);
      form.append('folder', 'counted');
      form.append('content', 'hello');
      const response = await ctx.app.inject({ method: 'POST', url: '/api/v1/assets', headers, body: form });
      assert.equal(response.statusCode, 200, response.body);
      return (response.json() as { id: string }).id;
    };
    assert.equal(await count(), 0);
    const first = await create('a.txt');
    assert.equal(await count(), 1);
    await create('b.txt');
    assert.equal(await count(), 2);
    const removed = await ctx.app.inject({ method: 'DELETE', url: `/api/v1/assets/${first}`, headers });
    assert.ok(removed.statusCode < 300, removed.body);
    assert.equal(await count(), 1);
  });
});
