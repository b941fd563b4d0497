import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { AccountRepository } from '../../src/accounts/repository.js';
import { AssetRepository } from '../../src/assets/repository.js';
import { ConversionRepository } from '../../src/conversions/repository.js';
import { EXAMPLES, SNAPSHOT_DIRS, formatSql, snapshotFiles } from './snapshots.js';

const ROOT = import.meta.dirname;
const UPDATE = 'run npm run sql:update and review the diff';

/** Where two texts first differ, as a line of each. */
function firstDifference(committed: string, current: string): string {
  const [a, b] = [committed.split('\n'), current.split('\n')];
  const line = a.findIndex((text, index) => text !== b[index]);
  const at = line === -1 ? a.length : line;
  return `line ${at + 1}:\n  committed: ${a[at] ?? '(end of file)'}\n  the code:  ${b[at] ?? '(end of file)'}`;
}

test('the committed SQL snapshots are the SQL the code sends', async () => {
  const files = await snapshotFiles();
  for (const [file, current] of files) {
    const committed = fs.existsSync(path.join(ROOT, file)) ? fs.readFileSync(path.join(ROOT, file), 'utf8') : undefined;
    assert.ok(committed !== undefined, `test/sql/${file} is missing: ${UPDATE}`);
    assert.ok(committed === current, `test/sql/${file} differs from the SQL the code sends (${firstDifference(committed, current)}): ${UPDATE}`);
  }
  for (const dir of SNAPSHOT_DIRS) {
    for (const name of fs.existsSync(path.join(ROOT, dir)) ? fs.readdirSync(path.join(ROOT, dir)) : []) {
      assert.ok(!name.endsWith('.sql') || files.has(`${dir}/${name}`), `test/sql/${dir}/${name} is no longer made by any repository: ${UPDATE}`);
    }
  }
});

test('every repository method has an example in the snapshots', () => {
  for (const repository of [AccountRepository, AssetRepository, ConversionRepository]) {
    const methods = Object.getOwnPropertyNames(repository.prototype).filter((name) => name !== 'constructor');
    const shown = new Set(EXAMPLES.filter((example) => example.className === repository.name).map((example) => example.method));
    const missing = methods.filter((method) => !shown.has(method));
    assert.deepEqual(missing, [], `add an example of ${repository.name}.${missing.join(', ')} to EXAMPLES in test/sql/snapshots.ts, then ${UPDATE}`);
  }
});

test('formatSql changes nothing but whitespace outside quotes', () => {
  const sql = `select "a from b", 'x where y' from "t" where "c" in (select "d" from "e" where "f" = ?) order by "a from b" limit ?`;
  assert.equal(formatSql(sql), `select "a from b", 'x where y'\nfrom "t"\nwhere "c" in (select "d" from "e" where "f" = ?)\norder by "a from b"\nlimit ?`);
  assert.equal(
    formatSql('insert into "t" ("a") values (?), (?) on conflict do nothing'),
    'insert into "t" ("a")\nvalues (?),\n       (?)\non conflict do nothing',
  );
  assert.equal(formatSql('delete from "t" where "a" = ?'), 'delete from "t"\nwhere "a" = ?');
});
