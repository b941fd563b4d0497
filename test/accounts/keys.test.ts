import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { generateApiKey, hashApiKey, keyPrefix } from '../../src/accounts/keys.js';
import { AccountService } from '../../src/accounts/service.js';
import { describeEachEngine, freshDatabase, type TestDatabase } from '../helpers/database.js';

test("a key's part kept in clear: the tag and 8 of its 32 random characters for a key acds made, 4 characters of any other", () => {
  const made = generateApiKey();
  const cases: [key: string, prefix: string][] = [
    [made, made.slice(0, 13)],
    ['Tr0ub4dor&3-horse-99', 'Tr0u'],
    ['acds_tooShortToBeOneWeMade', 'acds'],
    [`acds_${'x'.repeat(33)}`, 'acds'],
  ];
  for (const [key, prefix] of cases) assert.equal(keyPrefix(key), prefix, key);
});

describeEachEngine("an operator's bootstrap key", (engine) => {
  let database: TestDatabase;
  let accounts: AccountService;
  before(async () => {
    database = await freshDatabase(engine);
    accounts = new AccountService(database.db);
  });
  after(() => database.close());

  test('is kept in clear only by its first 4 characters, also where an earlier version kept more', async () => {
    const key = 'Tr0ub4dor&3-horse-99';
    await accounts.bootstrap(key);
    // As an earlier version stored it: 13 characters in clear.
    await database.db
      .updateTable('api_keys')
      .set({ prefix: key.slice(0, 13) })
      .where('key_hash', '=', hashApiKey(key))
      .execute();
    await accounts.bootstrap(key);
    assert.deepEqual(
      (await accounts.listKeys('default')).map(({ prefix }) => prefix),
      ['Tr0u'],
    );
    assert.ok(await accounts.authenticate(key), 'and it still authenticates');
  });
});
