import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { formatOfPath, importConversions, readRecords } from '../../src/conversions/import.js';
import { accountWithKey, describeEachEngine, startTestApp, type TestContext } from '../helper.js';

/**
 * Every `curl` example of the README's tour, replayed against the example data: a
 * summarised one (`| jq -c "$summary"`) is compared as its totals and receipts, a plain one
 * by its exact body.
 */
const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const EXAMPLE = /^curl -s "\$ACDS(\/api\/v1\/[^"]*)" -H "X-API-Key: ([^"]*)"( \| jq -c "\$summary")?\n# (.*)$/gm;
const examples = [...readme.matchAll(EXAMPLE)].map(([, url, keyText, summarised, answer]) => ({
  url: url!,
  keyText: keyText!,
  summarised: !!summarised,
  answer: answer!,
}));

describeEachEngine('README tour', (engine) => {
  let ctx: TestContext;
  let key: string;
  before(async () => {
    ctx = await startTestApp(engine);
    const account = await accountWithKey(ctx.accounts, 'readme');
    key = account.key;
    for (const file of ['examples/conversions.ndjson', 'examples/conversions.csv']) {
      await importConversions(ctx.database.db, account.accountId, readRecords(fs.createReadStream(file), formatOfPath(file)), {
        onProblem: (problem) => assert.fail(`${file}:${problem.line}: ${problem.reason}`),
      });
    }
  });
  after(() => ctx.close());

  test('the README has curl examples to check', () => {
    assert.ok(examples.length >= 15, `found only ${examples.length} examples`);
  });

  for (const example of examples) {
    test(`answers as printed: ${example.url}`, async () => {
      const response = await ctx.app.inject({ url: example.url, headers: { 'x-api-key': example.keyText === '$KEY' ? key : example.keyText } });
      if (!example.summarised) return assert.equal(response.body, example.answer);
      const body = response.json();
      const summary = { totalEntries: body.totalEntries, totalPages: body.totalPages, receipts: body.entries.map((e: { receipt: string }) => e.receipt) };
      assert.equal(JSON.stringify(summary), example.answer);
    });
  }

  test('the full entry printed in the README is the one served', async () => {
    const printed = /```json\n(.*)\n```/.exec(readme)?.[1];
    const response = await ctx.app.inject({ url: '/api/v1/conversions?receipt=DS-77', headers: { 'x-api-key': key } });
    assert.equal(response.body, printed);
  });
});
