import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AccountService } from '../../src/accounts/service.js';
import { describeEachEngine, freshDatabase, type TestDatabase } from '../helpers/database.js';

describeEachEngine("the database's id counters", (engine) => {
  let database: TestDatabase;
  let accounts: AccountService;
  const newAccountId = async (name: string) => (await accounts.findOrCreateAccount(name)).id;
  before(async () => {
    database = await freshDatabase(engine);
    accounts = new AccountService(database.db);
  });
  after(() => database.close());

  test("say the largest id handed out, a deleted row's included, and are moved past the ids another database handed out", async () => {
    const ids = [await newAccountId('one'), await newAccountId('two'), await newAccountId('three')];
    await database.db.deleteFrom('accounts').where('id', '=', ids[2]!).execute();
    assert.equal((await database.idCounters()).accounts, ids[2], "the deleted row's id is still counted");
    assert.equal(await newAccountId('four'), ids[2]! + 1, 'and is not handed out again');

    await database.db.transaction().execute((trx) => database.resetSequences(trx, { accounts: ids[2]! + 10 }));
    assert.equal(await newAccountId('five'), ids[2]! + 11);
    assert.equal((await database.idCounters()).accounts, ids[2]! + 11);
    // Never moved back.
    await database.db.transaction().execute((trx) => database.resetSequences(trx, { accounts: 1 }));
    assert.equal(await newAccountId('six'), ids[2]! + 12);
  });
});
