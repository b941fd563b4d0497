import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine } from '../helpers/database.js';
import { conversionRecord, insertConversions } from '../helpers/fixtures.js';

describeEachEngine('conversions listing smoke', (engine) => {
  let ctx: TestContext;
  let key: string;
  before(async () => {
    ctx = await startTestApp(engine);
    const account = await accountWithKey(ctx.accounts, 'smoke');
    key = account.key;
    await insertConversions(ctx.database, account.accountId, [
      conversionRecord({ amount: 19.99, tracking_codes: ['a', 'b'] }),
      conversionRecord({ amount: 5 }),
    ]);
  });
  after(() => ctx.close());

  test('an exact money filter finds the value written', async () => {
    const response = await ctx.app.inject({ url: '/api/v1/conversions?amount=19.99&tracking_codes=b', headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.equal(body.totalEntries, 1);
    assert.deepEqual(body.entries[0].tracking_codes, ['a', 'b']);
    assert.equal(body.entries[0].amount, 19.99);
  });
});
