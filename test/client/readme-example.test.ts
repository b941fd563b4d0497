import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { formatOfPath, importConversions, readRecords } from '../../src/conversions/import.js';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { tempDir } from '../helpers/database.js';

/**
 * The README's "From your code: `@acds/client`" as a newcomer follows it: a new, empty project
 * installs the client from the repository folder with the README's own `npm install` line, and
 * the README's TypeScript example, taken from the README as printed, type-checks against the
 * installed package and prints, against a service holding the tour's example data, the receipts
 * and per-cart sums that data gives. npm links the folder and runs the client's `prepare` there,
 * which builds client/dist with the tsc of the repository's own node_modules (after `npm ci`).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const section = /^## From your code: `@acds\/client`\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
const installLine = /```sh\n(npm install \S+)/.exec(section)?.[1];
const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
const README_URL = "'http://127.0.0.1:3000'";

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { ...options, timeout: 120_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${command} ${args.join(' ')}: ${error.message}\n${stdout}\n${stderr}`)) : resolve({ stdout, stderr }),
    );
  });
}

let ctx: TestContext;
let baseUrl: string;
let key: string;
const project = tempDir('acds-readme-client-');

before(async () => {
  ctx = await startTestApp('sqlite');
  baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const account = await accountWithKey(ctx.accounts, 'readme-client');
  key = account.key;
  // The tour's example data, imported as test/docs/readme.test.ts does.
  for (const file of ['examples/conversions.ndjson', 'examples/conversions.csv']) {
    await importConversions(ctx.database, account.accountId, readRecords(fs.createReadStream(path.join(ROOT, file)), formatOfPath(file)), {
      onProblem: (problem) => assert.fail(`${file}:${problem.line}: ${problem.reason}`),
    });
  }
});
after(async () => {
  await ctx?.close();
  fs.rmSync(project, { recursive: true, force: true });
});

test("the README's client example installs from the repository folder and runs as printed", async () => {
  assert.equal(installLine, 'npm install /path/to/acds/client', "the README's install line");
  assert.ok(example, 'the README has a ```ts example in its client section');
  assert.equal(example.split(README_URL).length, 2, `the example calls ${README_URL} once`);

  // A newcomer's shell: none of the npm_* variables of an `npm test` around this test.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  await run('npm', ['init', '-y'], { cwd: project, env });
  // The example awaits at its top level: an ES module (npm init writes "type": "commonjs").
  await run('npm', ['pkg', 'set', 'type=module'], { cwd: project, env });
  const installArgs = installLine.replace('/path/to/acds', ROOT).split(' ').slice(1);
  const install = await run('npm', [...installArgs, '--offline', '--no-audit', '--no-fund', '--foreground-scripts'], { cwd: project, env });
  assert.match(install.stdout + install.stderr, /> @acds\/client@\S+ prepare\n> tsc /, 'npm ran the prepare that builds dist/');

  fs.writeFileSync(path.join(project, 'example.ts'), example.replace(README_URL, JSON.stringify(baseUrl)));
  const tsc = path.join(ROOT, 'node_modules/.bin/tsc');
  const types = ['--typeRoots', path.join(ROOT, 'node_modules/@types'), '--types', 'node'];
  await run(tsc, ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', ...types, 'example.ts'], { cwd: project, env });
  const { stdout } = await run(process.execPath, ['--import', import.meta.resolve('tsx'), 'example.ts'], { cwd: project, env: { ...env, ACDS_KEY: key } });

  // From examples/: above 50 are CB-1002 (117) and BG-5001 (69); from 20 up, clickbank 49 + 117,
  // buygoods 69 and svencart 27 (DS-77's 19.99 is below) — as the README's tour prints them too.
  assert.equal(stdout, "CB-1002\nBG-5001\n[ 'buygoods: 69', 'clickbank: 166', 'svencart: 27' ]\n");
});
