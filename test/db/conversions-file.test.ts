import assert from 'node:assert/strict';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { sqliteFiles } from '../../src/db/sqlite/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { accountWithKey, startTestApp } from '../helpers/app.js';
import { describeEachEngine, freshDatabase } from '../helpers/database.js';
import { conversionRecord, insertConversions, rowBeforeNarrowing } from '../helpers/fixtures.js';
import { AccountService } from '../../src/accounts/service.js';
import { validateConversion } from '../../src/conversions/validate.js';

describeEachEngine('migration 0006: conversions in a file of their own', (engine) => {
  test('conversions stored before it keep their ids, entries and tracking codes, and new ones never reuse an id', async () => {
    const database = await freshDatabase(engine, { upTo: '0005-dated-indexes' });
    // The tracking codes' table of those versions, which migration 0007 drops.
    const db = database.db as Kysely<any>;
    try {
      const { id: accountId } = await database.db
        .insertInto('accounts')
        .values({ name: 'old', handle: 'old-handle', created_at: 0 } as never)
        .returning('id')
        .executeTakeFirstOrThrow();
      const ids: number[] = [];
      for (const receipt of ['OLD-1', 'OLD-2', 'OLD-3']) {
        const { id } = await db
          .insertInto('conversions')
          .values({ ...rowBeforeNarrowing(conversionRecord({ receipt, tracking_codes: [`code-${receipt}`] })), account_id: accountId })
          .returning('id')
          .executeTakeFirstOrThrow();
        await db
          .insertInto('conversion_tracking_codes')
          .values({ conversion_id: id, account_id: accountId, code: `code-${receipt}` })
          .execute();
        ids.push(id);
      }
      // The newest row gone: its id must still never come back.
      await db.deleteFrom('conversion_tracking_codes').where('conversion_id', '=', ids[2]!).execute();
      await database.db.deleteFrom('conversions').where('id', '=', ids[2]!).execute();

      await migrateToLatest(database, '0006-conversions-file');

      const kept = await database.db.selectFrom('conversions').select(['id', 'receipt']).orderBy('id').execute();
      assert.deepEqual(kept, [
        { id: ids[0], receipt: 'OLD-1' },
        { id: ids[1], receipt: 'OLD-2' },
      ]);
      const codes = await db.selectFrom('conversion_tracking_codes').select(['conversion_id', 'code']).orderBy('conversion_id').execute();
      assert.deepEqual(codes, [
        { conversion_id: ids[0], code: 'code-OLD-1' },
        { conversion_id: ids[1], code: 'code-OLD-2' },
      ]);
      if (engine === 'sqlite') {
        const main = new SQLite(sqliteFiles(database.dataDir).main, { readonly: true });
        const left = main.prepare(`select name from sqlite_master where name like 'conversion%'`).all();
        main.close();
        assert.deepEqual(left, [], 'nothing of the conversions is left in the main file');
      }

      // Through every later migration too: 0009 copies the table once more.
      await migrateToLatest(database);
      await insertConversions(database, accountId, [conversionRecord({ receipt: 'NEW-1' })]);
      const newest = await database.db.selectFrom('conversions').select('id').where('receipt', '=', 'NEW-1').executeTakeFirstOrThrow();
      assert.ok(newest.id > ids[2]!, `the new conversion's id ${newest.id} is past every id handed out before (${ids[2]})`);
    } finally {
      await database.close();
    }
  });
});

describeEachEngine('conversion versions', (engine) => {
  test("an import changes the account's data version, another account's import does not", async () => {
    const ctx = await startTestApp(engine);
    try {
      const mine = await accountWithKey(ctx.accounts, 'versioned');
      const other = await accountWithKey(ctx.accounts, 'other');
      const version = async () => (await ctx.accounts.authenticate(mine.key))!.dataVersion;
      const before = await version();
      await insertConversions(ctx.database, other.accountId, [conversionRecord()]);
      assert.equal(await version(), before);
      await insertConversions(ctx.database, mine.accountId, [conversionRecord()]);
      const afterImport = await version();
      assert.ok(afterImport > before);
      await new AccountService(ctx.database.db).createKey('versioned');
      assert.equal(await version(), afterImport, 'a new key changes no data');
    } finally {
      await ctx.close();
    }
  });

  test("an import makes the account's newest conversion id that of its last row; another account's import leaves it", async () => {
    const ctx = await startTestApp(engine);
    try {
      const mine = await accountWithKey(ctx.accounts, 'newest');
      const other = await accountWithKey(ctx.accounts, 'other');
      const newest = async () => (await ctx.accounts.authenticate(mine.key))!.newestConversionId;
      const largestOf = async (accountId: number) =>
        Number(
          (
            await ctx.database.db
              .selectFrom('conversions')
              .select((eb) => eb.fn.max('id').as('id'))
              .where('account_id', '=', accountId)
              .executeTakeFirstOrThrow()
          ).id,
        );
      assert.equal(await newest(), 0, 'no conversions yet');
      await insertConversions(ctx.database, mine.accountId, [conversionRecord({ receipt: 'M-1' }), conversionRecord({ receipt: 'M-2' })]);
      assert.equal(await newest(), await largestOf(mine.accountId));
      await insertConversions(ctx.database, other.accountId, [conversionRecord({ receipt: 'O-1' })]);
      assert.ok((await largestOf(other.accountId)) > (await newest()));
      assert.equal(await newest(), await largestOf(mine.accountId));
    } finally {
      await ctx.close();
    }
  });
});

describeEachEngine('migration 0011: newest conversion ids', (engine) => {
  test('every account with conversions gets an id none of its conversions lies above, its version unchanged', async () => {
    const database = await freshDatabase(engine, { upTo: '0010-no-account-id-index' });
    const db = database.db as Kysely<any>;
    try {
      const account = async (name: string) =>
        (
          await db
            .insertInto('accounts')
            .values({ name, handle: `${name}-handle`, created_at: 0 })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id as number;
      const [versioned, unversioned, empty] = [await account('versioned'), await account('unversioned'), await account('empty')];
      const ids: number[] = [];
      for (const [accountId, receipt] of [
        [versioned, 'V-1'],
        [unversioned, 'U-1'],
        [versioned, 'V-2'],
      ] as const) {
        const checked = validateConversion(conversionRecord({ receipt }));
        if (!('row' in checked)) throw new Error(checked.problems.join('; '));
        const { id } = await db
          .insertInto('conversions')
          .values({ ...checked.row, account_id: accountId })
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(Number(id));
      }
      await db.insertInto('conversion_versions').values({ account_id: versioned, version: 3 }).execute();

      await migrateToLatest(database);

      const rows = await database.db.selectFrom('conversion_versions').select(['account_id', 'version', 'newest_id']).orderBy('account_id').execute();
      const largest = Math.max(...ids);
      assert.deepEqual(
        rows.map((row) => ({ account: Number(row.account_id), version: Number(row.version), newest: Number(row.newest_id) })),
        [
          { account: versioned, version: 3, newest: largest },
          { account: unversioned, version: 0, newest: largest },
        ],
      );
      assert.ok(!rows.some((row) => Number(row.account_id) === empty));
    } finally {
      await database.close();
    }
  });
});
