import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { AccountRepository } from '../../src/accounts/repository.js';
import { ConversionRepository } from '../../src/conversions/repository.js';
import { validateConversion } from '../../src/conversions/validate.js';
import { ENGINES, freshDatabase, type TestDatabase } from '../helpers/database.js';
import { conversionRecord } from '../helpers/fixtures.js';

/**
 * PostgreSQL parses and plans an import's batch insert once per connection (KEEP_PREPARED in
 * compiled-once.ts), as a statement of its own name: these tests hold that each batch still
 * inserts exactly its rows, and that the connection ran them all as that one statement. SQLite's
 * driver keeps every statement prepared, so there is nothing of the kind to see there.
 */

for (const engine of ENGINES.filter((name) => name === 'postgres')) {
  describe(`an import's batch insert kept prepared [${engine}]`, () => {
    let database: TestDatabase;
    let accountId: number;

    before(async () => {
      database = await freshDatabase(engine);
      accountId = (await new AccountRepository(database.db).ensure('prepared', 'h-prepared', 1)).id;
    });
    after(() => database.close());

    const batchOf = (batch: number, size: number) =>
      Array.from({ length: size }, (_, index) => {
        const checked = validateConversion(conversionRecord({ receipt: `P-${batch}-${index}` }));
        assert.ok('row' in checked);
        return checked.row;
      });

    test('batches of one size run as one named statement on their connection, each inserting its own rows', async () => {
      const statements = await database.db.transaction().execute(async (trx) => {
        await database.serializeConversionWrites(trx);
        const repository = new ConversionRepository(trx, database);
        for (let batch = 0; batch < 3; batch++) assert.equal(await repository.insertNew(accountId, batchOf(batch, 4)), 4);
        // A batch seen before adds nothing, through the same statement.
        assert.equal(await repository.insertNew(accountId, batchOf(1, 4)), 0);
        const { rows } = await sql<{ name: string; runs: number }>`
          select name, (generic_plans + custom_plans)::int as runs from pg_prepared_statements
          where statement like ${'%insert into "conversions"%'}`.execute(trx);
        return rows;
      });
      assert.equal(statements.length, 1, 'one prepared statement for the batches of one size');
      assert.match(statements[0]!.name, /^acds_[0-9a-f]{8}_[0-9a-f]{24}$/);
      assert.equal(statements[0]!.runs, 4);
      const receipts = await database.db.selectFrom('conversions').select('receipt').where('account_id', '=', accountId).orderBy('id').execute();
      assert.deepEqual(
        receipts.map((row) => row.receipt),
        [0, 1, 2].flatMap((batch) => [0, 1, 2, 3].map((index) => `P-${batch}-${index}`)),
      );
    });

    test('statements not marked to be kept prepared are not', async () => {
      const { before, after } = await database.db.transaction().execute(async (trx) => {
        const prepared = async () => (await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(trx)).rows;
        const before = await prepared();
        assert.equal((await new ConversionRepository(trx, database).entriesByIds(accountId, [1, 2])).length, 2);
        return { before, after: await prepared() };
      });
      assert.deepEqual(after, before);
    });
  });
}
