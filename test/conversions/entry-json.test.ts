import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Value } from 'typebox/value';
import { migrateToLatest } from '../../src/db/migrate.js';
import { entryJsonOf } from '../../src/conversions/entry-json.js';
import { ConversionEntry } from '../../src/conversions/schema.js';
import { parseTimestamp } from '../../src/filters/timestamps.js';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine, freshDatabase } from '../helpers/database.js';
import { conversionRecord, insertConversions, rowBeforeNarrowing } from '../helpers/fixtures.js';

/**
 * Each conversion's entry is written as JSON once, on import, and a list page is made of those
 * texts, read rather than built field by field, which makes pages fast (docs/performance.md).
 * These tests hold the stored text to the entry schema, byte for byte, and check that rows
 * imported before that column existed are filled in by the migration.
 */

const TRICKY = conversionRecord({
  receipt: 'Zoë "quoted" \\ back\nslash',
  amount: 49,
  tax_amount: 19.99,
  shipping_amount: null,
  upsell_step: 2.5,
  mobile: null,
  page_id: -5,
  first_name: 'Ümit 😀',
  tracking_codes: ['a,b', 'c'],
  affiliate_payouts: [1.25, 0.1, 3],
  products: [{ sku: 'S"1', price: 0.3, qty: 2 }],
});

/** What JSON.stringify writes for the entry, keys in the schema's order. */
function expectedText(id: number, record: Record<string, unknown>): string {
  const entry: Record<string, unknown> = { ...record, id };
  return JSON.stringify(Object.fromEntries(Object.keys(ConversionEntry.properties).map((name) => [name, entry[name]])));
}

test('an entry is written with fields left out as null or empty, products in the schema order, and nothing else', () => {
  const json = entryJsonOf({ id: 77, cart_integration: 'clickbank', receipt: 'R-1', products: [{ qty: 2, sku: 'S-1', price: 9.5 }] }, 1_790_000_000);
  const expected: Record<string, unknown> = Object.fromEntries(
    Object.entries(ConversionEntry.properties)
      .filter(([name]) => name !== 'id')
      .map(([name, property]) => [name, 'items' in property ? [] : null]),
  );
  Object.assign(expected, { created_at: '2026-09-21T14:13:20Z', cart_integration: 'clickbank', receipt: 'R-1' });
  expected.products = [{ sku: 'S-1', price: 9.5, qty: 2 }];
  assert.equal(json, JSON.stringify(expected));
});

test('an entry holds its time in UTC to the second, however the record wrote it', () => {
  for (const written of [
    '2026-09-21T14:13:20Z',
    '2026-09-21T16:13:20+02:00',
    '2026-09-21T09:13:20-05:00',
    '2026-09-21t14:13:20z',
    '2026-09-21T14:13:20.999Z',
    '2026-09-21 14:13:20',
    '2026-09-21T14:13:20',
  ]) {
    const json = entryJsonOf({ created_at: written, cart_integration: 'clickbank', receipt: 'R-1' }, parseTimestamp(written)!);
    assert.equal(JSON.parse(json).created_at, '2026-09-21T14:13:20Z', written);
  }
  assert.equal(
    JSON.parse(entryJsonOf({ created_at: '0099-01-02T03:04:05Z', cart_integration: 'clickbank', receipt: 'R-1' }, parseTimestamp('0099-01-02T03:04:05Z')!))
      .created_at,
    '0099-01-02T03:04:05Z',
  );
});

describeEachEngine('conversion entries as stored JSON', (engine) => {
  let ctx: TestContext;
  let apiKey: string;

  before(async () => {
    ctx = await startTestApp(engine);
    const account = await accountWithKey(ctx.accounts, 'entries');
    apiKey = account.key;
    await insertConversions(ctx.database, account.accountId, [
      TRICKY,
      conversionRecord({ receipt: 'plain', mobile: true }),
      conversionRecord({ receipt: 'f', mobile: false }),
    ]);
  });
  after(() => ctx.close());

  test('a listed entry is, byte for byte, the entry schema written by JSON.stringify, and valid against it', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/api/v1/conversions', headers: { 'x-api-key': apiKey } });
    assert.equal(response.statusCode, 200);
    assert.match(response.headers['content-type'] as string, /^application\/json; charset=utf-8$/);
    const page = response.json() as { entries: { id: number; receipt: string }[] };
    assert.equal(page.entries.length, 3);
    for (const entry of page.entries) assert.ok(Value.Check(ConversionEntry, entry), JSON.stringify([...Value.Errors(ConversionEntry, entry)]));
    const first = page.entries[0]!;
    assert.equal(first.receipt, TRICKY.receipt);
    const expectedBody = expectedText(first.id, TRICKY);
    assert.ok(response.body.startsWith(`{"entries":[${expectedBody},`), `${response.body.slice(0, 600)}\n---\n${expectedBody}`);
    assert.deepEqual(
      page.entries.map((entry) => (entry as { mobile?: unknown }).mobile),
      [null, true, false],
    );
  });
});

describeEachEngine('migration 0003', (engine) => {
  test('fills in the entry of every conversion imported before it, as the import writes it now', async () => {
    const database = await freshDatabase(engine, { upTo: '0002-assets' });
    try {
      const { id: accountId } = await database.db
        .insertInto('accounts')
        .values({ name: 'old', handle: 'old-handle', created_at: 0 } as never)
        .returning('id')
        .executeTakeFirstOrThrow();
      const rows = [TRICKY, conversionRecord({ mobile: true })].map(rowBeforeNarrowing);
      for (const { entry_json: _new, ...old } of rows)
        await database.db
          .insertInto('conversions')
          .values({ ...old, account_id: accountId } as never)
          .execute();

      await migrateToLatest(database);
      const stored = await database.db.selectFrom('conversions').select('entry_json').orderBy('id').execute();
      assert.deepEqual(
        stored.map((row) => JSON.parse(row.entry_json)),
        rows.map((row) => JSON.parse(row.entry_json as string)),
      );
    } finally {
      await database.close();
    }
  });
});
