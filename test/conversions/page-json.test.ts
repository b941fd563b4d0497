import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AccountRepository } from '../../src/accounts/repository.js';
import { ConversionRepository } from '../../src/conversions/repository.js';
import { CompiledOnce } from '../../src/db/compiled-once.js';
import { describeEachEngine, freshDatabase, type TestDatabase } from '../helpers/database.js';
import { conversionRecord, insertConversions } from '../helpers/fixtures.js';

/**
 * A list page's entries are read as one value the database joins (pageJsonByIds), with SQL built
 * once per number of ids and run again with new ones: these tests hold that value to the entries
 * of exactly the ids asked, of the account asked, in id order, whatever ids came before.
 */

describeEachEngine('a page of conversions read as one value', (engine) => {
  let database: TestDatabase;
  let ours: number;
  let theirs: number;
  let ourIds: number[];
  let theirIds: number[];

  before(async () => {
    database = await freshDatabase(engine);
    const accounts = new AccountRepository(database.db);
    ours = (await accounts.ensure('ours', 'h-ours', 1)).id;
    theirs = (await accounts.ensure('theirs', 'h-theirs', 1)).id;
    // Interleaved, so that one account's ids are not one run of numbers.
    for (let index = 0; index < 6; index++) {
      await insertConversions(database, ours, [conversionRecord({ receipt: `O-${index}`, amount: index + 0.5, first_name: `Zoë ${index}` })]);
      await insertConversions(database, theirs, [conversionRecord({ receipt: `T-${index}` })]);
    }
    const idsOf = async (accountId: number) =>
      (await database.db.selectFrom('conversions').select('id').where('account_id', '=', accountId).orderBy('id').execute()).map((row) => Number(row.id));
    ourIds = await idsOf(ours);
    theirIds = await idsOf(theirs);
  });
  after(() => database.close());

  /** The entries of a page as the API sends them: a JSON array of the value read. */
  async function pageOf(repository: ConversionRepository, accountId: number, ids: number[]) {
    const { found, json } = await repository.pageJsonByIds(accountId, ids);
    const text = typeof json === 'string' ? json : Buffer.from(json).toString('utf8');
    return { found, entries: JSON.parse(`[${text}]`) as { id: number; receipt: string; first_name: string }[] };
  }

  test('the entries of the ids asked come in id order, each with its id first, whatever order they were asked in', async () => {
    const repository = new ConversionRepository(database.db, database);
    const asked = [ourIds[4]!, ourIds[1]!, ourIds[2]!];
    const { found, entries } = await pageOf(repository, ours, asked);
    assert.equal(found, 3);
    assert.deepEqual(
      entries.map((entry) => [entry.id, entry.receipt, entry.first_name]),
      [
        [ourIds[1], 'O-1', 'Zoë 1'],
        [ourIds[2], 'O-2', 'Zoë 2'],
        [ourIds[4], 'O-4', 'Zoë 4'],
      ],
    );
    assert.equal(Object.keys(entries[0]!)[0], 'id');
  });

  test("another account's ids are not read, and found says how many of the ids the account has", async () => {
    const repository = new ConversionRepository(database.db, database);
    const { found, entries } = await pageOf(repository, ours, [ourIds[0]!, theirIds[0]!, theirIds[1]!]);
    assert.equal(found, 1);
    assert.deepEqual(
      entries.map((entry) => entry.id),
      [ourIds[0]],
    );
    assert.deepEqual(await pageOf(repository, ours, []), { found: 0, entries: [] });
  });

  test("an export's batch, as NDJSON or as entries, leaves out another account's ids", async () => {
    const repository = new ConversionRepository(database.db, database);
    const asked = [ourIds[0]!, theirIds[0]!, ourIds[2]!, theirIds[3]!];
    const ndjson = await repository.ndjsonByIds(ours, asked);
    const lines = (typeof ndjson === 'string' ? ndjson : Buffer.from(ndjson).toString('utf8')).trimEnd().split('\n');
    assert.deepEqual(
      lines.map((line) => (JSON.parse(line) as { id: number }).id),
      [ourIds[0], ourIds[2]],
    );
    assert.deepEqual(
      (await repository.entriesByIds(ours, asked)).map((row) => Number(row.id)),
      [ourIds[0], ourIds[2]],
    );
  });

  test('the statement built for a number of ids answers later pages of that many ids with their own rows', async () => {
    const repository = new ConversionRepository(database.db, database);
    const first = await pageOf(repository, ours, ourIds.slice(0, 2));
    const second = await pageOf(repository, ours, ourIds.slice(3, 5));
    const theirPage = await pageOf(repository, theirs, theirIds.slice(2, 4));
    assert.deepEqual(
      first.entries.map((entry) => entry.receipt),
      ['O-0', 'O-1'],
    );
    assert.deepEqual(
      second.entries.map((entry) => entry.receipt),
      ['O-3', 'O-4'],
    );
    assert.deepEqual(
      theirPage.entries.map((entry) => entry.receipt),
      ['T-2', 'T-3'],
    );
  });

  test('CompiledOnce builds a shape once and runs it with the parameters of each call', async () => {
    const compiled = new CompiledOnce(database.db, 'a test');
    let builds = 0;
    const receiptOf = async (id: number, on = compiled) => {
      const query = () => {
        builds++;
        return database.db.selectFrom('conversions').select('receipt').where('id', '=', id);
      };
      return (await on.execute('receipt by id', query, [id])).rows[0]?.receipt;
    };
    assert.equal(await receiptOf(ourIds[0]!), 'O-0');
    assert.equal(await receiptOf(theirIds[5]!), 'T-5');
    assert.equal(await receiptOf(-1), undefined);
    assert.equal(builds, 1);

    // Made anew for each transaction, as repositories are, it finds the shapes built before.
    const inTransaction = await database.db.transaction().execute((trx) => receiptOf(ourIds[1]!, new CompiledOnce(trx, 'a test')));
    assert.equal(inTransaction, 'O-1');
    assert.equal(builds, 1);
    // Another scope's key of the same name is another statement.
    assert.equal(await receiptOf(ourIds[0]!, new CompiledOnce(database.db, 'another test')), 'O-0');
    assert.equal(builds, 2);
  });
});
