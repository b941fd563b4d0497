import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storedEntryJson } from '../../src/assets/entry.js';
import type { NewAssetRow } from '../../src/assets/repository.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { describeEachEngine, freshDatabase } from '../helpers/database.js';

/**
 * Each asset's entry is stored as JSON with its row, written by every insert and update, and
 * a list page is made of those texts, read rather than built field by field, which makes pages
 * fast (docs/performance.md). Listing tests hold the listed entries to the entries read one by
 * one (api.test.ts); this one checks that assets made before the column existed are filled in
 * by migration 0004, as the service writes them now.
 */

const asset = (overrides: Partial<NewAssetRow>): Omit<NewAssetRow, 'account_id'> => ({
  created_at: 1_795_443_506,
  updated_at: 1_795_443_999,
  name: 'hero.png',
  folder: 'landing/images',
  image: 1,
  video: 0,
  script: 0,
  style: 0,
  text: 0,
  width: 640,
  height: 480,
  url: null,
  async: 0,
  defer: 0,
  blob_key: '1/0123456789abcdef',
  size: 6320,
  content_type: 'image/png',
  etag: 'e1',
  public_id: 'p1',
  ...overrides,
});

describeEachEngine('migration 0004', (engine) => {
  test('fills in the entry of every asset made before it, as the service writes it now', async () => {
    const database = await freshDatabase(engine, { upTo: '0003-list-speed' });
    try {
      const { id: accountId } = await database.db
        .insertInto('accounts')
        .values({ name: 'old', handle: 'old-handle', created_at: 0 } as never)
        .returning('id')
        .executeTakeFirstOrThrow();
      const rows: NewAssetRow[] = [
        asset({}),
        asset({
          name: 'Zoë "quoted" \\ back ☕.js',
          folder: '',
          image: 0,
          script: 1,
          async: 1,
          width: null,
          height: null,
          content_type: 'text/javascript',
          public_id: 'p2',
        }),
        asset({
          name: 'remote.jpg',
          url: 'https://cdn.example.com/a.jpg?v="1"',
          blob_key: null,
          size: null,
          content_type: null,
          etag: null,
          width: null,
          height: 90,
          public_id: 'p3',
        }),
      ].map((row) => ({ ...row, account_id: accountId }));
      for (const row of rows)
        await database.db
          .insertInto('assets')
          .values(row as never)
          .execute();

      await migrateToLatest(database);
      const stored = await database.db.selectFrom('assets').select('entry_json').orderBy('id').execute();
      assert.deepEqual(
        stored.map((row) => JSON.parse(row.entry_json)),
        rows.map((row) => JSON.parse(storedEntryJson(row))),
      );
    } finally {
      await database.close();
    }
  });
});
