import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine } from '../helpers/database.js';
import { holdImportWrites, holdWrites } from '../helpers/write-locks.js';

/**
 * An import runs for minutes in its own process, in one transaction. Asset writes must neither
 * wait for it nor fail, and a write that does wait for another writer must not hold up the
 * service's other requests meanwhile.
 */
describeEachEngine('asset writes beside other writers', (engine) => {
  let ctx: TestContext;
  let apiKey: string;
  let accountId: number;

  before(async () => {
    ctx = await startTestApp(engine);
    ({ key: apiKey, accountId } = await accountWithKey(ctx.accounts, 'beside-imports'));
  });
  after(() => ctx.close());

  const create = (name: string) => {
    const body = new FormData();
    body.append('name', name);
    body.append('content', 'body { color: red }');
    return ctx.app.inject({ method: 'POST', url: '/api/v1/assets', headers: { 'x-api-key': apiKey }, payload: body });
  };
  /** What `answer` settles to within `ms`, or 'still waiting'. */
  const within = <T>(ms: number, answer: Promise<T>) =>
    Promise.race([answer, new Promise<'still waiting'>((resolve) => setTimeout(resolve, ms, 'still waiting'))]);

  test('an asset is created at once while an import into the same account is in its transaction', async () => {
    const endImport = await holdImportWrites(ctx.database, accountId);
    try {
      // On SQLite the write used to wait 5 s for the import's lock, then fail.
      const answer = await within(4000, create('during-import.css'));
      if (answer === 'still waiting') assert.fail('the create waited for the import');
      assert.equal(answer.statusCode, 200, answer.body);
    } finally {
      await endImport();
    }
  });

  test('while a write waits for another writer, other requests are answered', async () => {
    const endOther = await holdWrites(ctx.database, accountId);
    let waiting: ReturnType<typeof create> | undefined;
    try {
      const started = Date.now();
      waiting = create('waits.css');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const health = await ctx.app.inject({ method: 'GET', url: '/healthz' });
      const list = await ctx.app.inject({ method: 'GET', url: '/api/v1/conversions', headers: { 'x-api-key': apiKey } });
      assert.equal(health.statusCode, 200);
      assert.equal(list.statusCode, 200);
      // On SQLite the waiting write held the event loop for its 5 s: the timer above fired only then.
      assert.ok(Date.now() - started < 2000, `other requests were answered after ${Date.now() - started} ms`);
      assert.equal(await within(50, waiting), 'still waiting', 'the write is still waiting for the other writer');
    } finally {
      await endOther();
      await waiting;
    }
  });
});
