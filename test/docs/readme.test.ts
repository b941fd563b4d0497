import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { formatOfPath, importConversions, readRecords } from '../../src/conversions/import.js';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine } from '../helpers/database.js';

/**
 * Every `curl` example of the tour, the README's short one and its continuation in
 * docs/tour.md, and of docs/api.md, replayed against the example data: a summarised one
 * (`| jq -c "$summary"`) is compared as its totals and receipts, a plain one by its exact body
 * (each of its lines a `# ` line below the command).
 */
const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const tour = fs.readFileSync(new URL('../../docs/tour.md', import.meta.url), 'utf8');
const api = fs.readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
const EXAMPLE = /^curl -s "\$ACDS(\/api\/v1\/[^"]*)" -H "X-API-Key: ([^"]*)"( \| jq -c "\$summary")?\n((?:# .*(?:\n|$))+)/gm;
const examplesOf = (text: string, file: string) =>
  [...text.matchAll(EXAMPLE)].map(([, url, keyText, summarised, answer]) => ({
    file,
    url: url!,
    keyText: keyText!,
    summarised: !!summarised,
    answer: answer!.replace(/\n$/, '').replaceAll(/^# /gm, ''),
  }));
const readmeExamples = examplesOf(readme, 'README.md');
const examples = [...readmeExamples, ...examplesOf(tour, 'docs/tour.md'), ...examplesOf(api, 'docs/api.md')];

describeEachEngine('README and docs/tour.md tour', (engine) => {
  let ctx: TestContext;
  let key: string;
  before(async () => {
    ctx = await startTestApp(engine);
    const account = await accountWithKey(ctx.accounts, 'readme');
    key = account.key;
    for (const file of ['examples/conversions.ndjson', 'examples/conversions.csv']) {
      await importConversions(ctx.database, account.accountId, readRecords(fs.createReadStream(file), formatOfPath(file)), {
        onProblem: (problem) => assert.fail(`${file}:${problem.line}: ${problem.reason}`),
      });
    }
  });
  after(() => ctx.close());

  test('the README and docs/tour.md have curl examples to check', () => {
    assert.ok(readmeExamples.length >= 3, `found only ${readmeExamples.length} examples in the README`);
    assert.ok(examples.length >= 15, `found only ${examples.length} examples`);
  });

  for (const example of examples) {
    test(`answers as printed in ${example.file}: ${example.url}`, async () => {
      const response = await ctx.app.inject({ url: example.url, headers: { 'x-api-key': example.keyText === '$KEY' ? key : example.keyText } });
      // A body ending in a line feed (an export) prints as its lines; CSV's end in CR LF.
      if (!example.summarised) return assert.equal(response.body.replaceAll('\r\n', '\n').replace(/\n$/, ''), example.answer);
      const body = response.json();
      const summary = { totalEntries: body.totalEntries, totalPages: body.totalPages, receipts: body.entries.map((e: { receipt: string }) => e.receipt) };
      assert.equal(JSON.stringify(summary), example.answer);
    });
  }

  test('the full entry printed in docs/tour.md is the one served', async () => {
    const printed = /```json\n(.*)\n```/.exec(tour)?.[1];
    assert.ok(printed, 'docs/tour.md prints an entry');
    const response = await ctx.app.inject({ url: '/api/v1/conversions?receipt=DS-77', headers: { 'x-api-key': key } });
    assert.equal(response.body, printed);
  });
});

/**
 * The assets tour (docs/tour.md) is a shell block: it runs as written, with curl and jq, against
 * the service listening on a loopback port, and each command must print the line under it.
 */
const assetsTour = /<!-- tour:assets -->\n```sh\n([\s\S]*?)```/.exec(tour)?.[1] ?? '';

describeEachEngine('docs/tour.md assets tour', (engine) => {
  test('every command prints what docs/tour.md says', async () => {
    const ctx = await startTestApp(engine);
    try {
      const { key } = await accountWithKey(ctx.accounts, 'tour');
      const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      const steps: { command: string; expected: string | undefined }[] = [];
      for (const line of assetsTour.split('\n')) {
        if (line.startsWith('# ')) steps[steps.length - 1]!.expected = line.slice(2);
        else if (line.trim() !== '') steps.push({ command: line, expected: undefined });
      }
      assert.ok(steps.length >= 14, 'the tour has its commands');
      const script = steps.map((step) => `${step.command}\nprintf '\\n<<<cut>>>\\n'`).join('\n');
      const { stdout } = await run('bash', ['-c', `set -e\n${script}`], { ...process.env, ACDS: address, KEY: key });
      const outputs = stdout.split('\n<<<cut>>>\n');
      steps.forEach((step, index) => {
        const printed = outputs[index]!.replace(/\n$/, '');
        assert.equal(printed, step.expected ?? '', `output of: ${step.command}`);
      });
    } finally {
      await ctx.close();
    }
  });
});

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { env, cwd: new URL('../..', import.meta.url), timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve({ stdout }),
    );
  });
}
