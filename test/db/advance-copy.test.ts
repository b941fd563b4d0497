import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { AccountService } from '../../src/accounts/service.js';
import { type ImportResult, importConversions, ImportRejected, type SourceRecord } from '../../src/conversions/import.js';
import { CONVERSION_SOURCE_COLUMNS, type ConversionQuestions, openConversionQuestions } from '../../src/conversions/questions.js';
import { conversionCatalogue } from '../../src/conversions/schema.js';
import { seededRandom, syntheticConversions } from '../../src/conversions/synthetic.js';
import { advanceCopies, advanceCopyFor, readAdvanceRows, stopReading } from '../../src/db/columnar/advance-copy.js';
import { parseFilters } from '../../src/filters/parse.js';
import { freshDatabase, tempDir, testConfig, type TestDatabase } from '../helpers/database.js';
import { conversionsAsOf, insertConversions } from '../helpers/fixtures.js';

/**
 * A command-line import beside the embedded database copies its rows as it writes them
 * (advance-copy.ts), and the service's index takes them in while the import runs, where no
 * question reads them until the import's mark shows it committed. Only SQLite has advance copies.
 */

const records = (count: number, seed: number) => [...syntheticConversions(count, { random: seededRandom(seed) })];

/**
 * The records in batches of 1,000, waiting for `pause` once `pauseAfter` have been handed out. An
 * import copies its new rows 5,000 at a time: the tests pause theirs past that.
 */
async function* batchesOf(values: unknown[], pauseAfter: number, pause: Promise<void>): AsyncGenerator<SourceRecord[]> {
  for (let start = 0; start < values.length; start += 1_000) {
    if (start === pauseAfter) await pause;
    yield values.slice(start, start + 1_000).map((value, index) => ({ line: start + index + 1, record: { value } }));
  }
}

/** Waits until a line of `logged` matches `pattern`, for a minute at most. */
async function untilLogged(logged: string[], pattern: RegExp): Promise<void> {
  const givenUpAt = Date.now() + 60_000;
  while (!logged.some((line) => pattern.test(line))) {
    if (Date.now() > givenUpAt) assert.fail(`nothing logged matches ${pattern}:\n${logged.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Context {
  database: TestDatabase;
  accountId: number;
  logged: string[];
  questions: () => ConversionQuestions;
  reopen: () => Promise<void>;
  /**
   * Imports `values` into the account as the command line does beside a service, waiting for
   * `pause` once `pauseAfter` have been read; `copied` chooses which of each batch of rows written
   * reach the copy (all of them by default).
   */
  importing: (values: unknown[], pauseAfter: number, pause: Promise<void>, copied?: (rows: unknown[][]) => unknown[][]) => Promise<ImportResult>;
}

/** A promise that settles when `open` is called. */
function gate(): { closed: Promise<void>; open: () => void } {
  let open!: () => void;
  const closed = new Promise<void>((resolve) => (open = resolve));
  return { closed, open };
}

async function withIndex(work: (context: Context) => Promise<void>): Promise<void> {
  const database = await freshDatabase('sqlite');
  const logged: string[] = [];
  const open = () => openConversionQuestions(testConfig(database), database, (line) => logged.push(line));
  let questions = open();
  try {
    const { id } = await new AccountService(database.db).findOrCreateAccount('importing');
    // Opened before the import, as a running service's index is.
    await questions.page(await conversionsAsOf(database, id), [], 1);
    await work({
      database,
      accountId: id,
      logged,
      questions: () => questions,
      reopen: async () => {
        await questions.close();
        questions = open();
      },
      importing: (values, pauseAfter, pause, copied) => {
        const advanceCopy = advanceCopyFor(database.conversionSource, CONVERSION_SOURCE_COLUMNS)!;
        if (copied) {
          // The copy's writing of rows, which nothing outside it calls.
          const copy = advanceCopy as unknown as { append: (rows: unknown[][]) => void };
          const append = copy.append.bind(copy);
          copy.append = (rows) => append(copied(rows));
        }
        return importConversions(database, id, batchesOf(values, pauseAfter, pause), { onProblem: () => {}, advanceCopy }).finally(() => advanceCopy.remove());
      },
    });
  } finally {
    await questions.close();
    await database.close();
  }
}

test('a copy is read a whole row at a time, as far as it has been written, and on from there', () => {
  const folder = tempDir();
  const file = `${folder}/import.rows`;
  const row = (id: number) => `[${id},7,1700000000]\n{"receipt":"R-${id}","note":"a, b\\n"}\n`;
  fs.writeFileSync(file, `{"token":"t","pid":${process.pid}}\n${row(1)}${row(2)}${row(3).slice(0, 20)}`);
  const [reading] = advanceCopies(folder);
  assert.deepEqual(reading!.header, { token: 't', pid: process.pid });
  const ids = (rows: unknown[][]) => rows.map((read) => read[0]);
  assert.deepEqual(readAdvanceRows(reading!, 10), [
    [1, 7, 1700000000, '{"receipt":"R-1","note":"a, b\\n"}'],
    [2, 7, 1700000000, '{"receipt":"R-2","note":"a, b\\n"}'],
  ]);
  assert.deepEqual(readAdvanceRows(reading!, 10), [], 'half a row is not one');
  fs.appendFileSync(file, `${row(3).slice(20)}${row(4)}${row(5)}`);
  assert.deepEqual(ids(readAdvanceRows(reading!, 2)), [3, 4], 'up to the limit');
  fs.rmSync(file);
  assert.deepEqual(ids(readAdvanceRows(reading!, 10)), [5], 'read on once the file is removed');
  stopReading(reading!);
  fs.rmSync(folder, { recursive: true });
});

test("an import's rows are taken in while it runs: when it commits they are counted at once, without a catch-up of them", async () => {
  await withIndex(async ({ database, accountId, logged, questions, importing }) => {
    const imported = records(12_000, 1);
    const paused = gate();
    const imports = importing(imported, 8_000, paused.closed);
    await untilLogged(logged, /^columnar index: taking in an import's rows as it writes them, after id 0$/);
    // Taken in, but not counted: the import has not committed.
    assert.equal((await questions().page(await conversionsAsOf(database, accountId), [], 1)).total, 0);
    paused.open();
    assert.equal((await imports).inserted, imported.length);
    const { total, ids } = await questions().page(await conversionsAsOf(database, accountId), [], 1);
    assert.equal(total, imported.length);
    assert.deepEqual(
      ids,
      Array.from({ length: 100 }, (_, index) => index + 1),
    );
    assert.ok(logged.includes(`columnar index: an import's ${imported.length} rows committed, taken in as it ran`), logged.join('\n'));
    assert.ok(!logged.some((line) => /rows indexed|caught up/.test(line)), `no catch-up of the import's rows:\n${logged.join('\n')}`);
    assert.deepEqual(fs.readdirSync(`${database.dataDir}/importing`), ['reader.pid'], 'the copy is gone');
  });
});

test('an import partly of rows there already has its new rows taken in as stored, and counted at once when it commits', async () => {
  await withIndex(async ({ database, accountId, logged, questions, importing }) => {
    const all = records(9_000, 5);
    await insertConversions(
      database,
      accountId,
      all.filter((_, index) => index % 3 === 0),
    );
    assert.equal((await questions().page(await conversionsAsOf(database, accountId), [], 1)).total, 3_000);
    const result = await importing(all, 8_000, untilLogged(logged, /^columnar index: taking in an import's rows/));
    assert.equal(result.skipped, 3_000);
    const asOf = await conversionsAsOf(database, accountId);
    assert.equal((await questions().page(asOf, [], 1)).total, all.length);
    const google = parseFilters({ utm_source: 'google' }, conversionCatalogue, []);
    assert.equal((await questions().page(asOf, google, 1)).total, all.filter((record) => record.utm_source === 'google').length);
    assert.ok(logged.includes("columnar index: an import's 6000 rows committed, taken in as it ran"), logged.join('\n'));
  });
});

test('rows of an import that does not commit are taken out again, and the rows written after it under the same ids are counted exactly', async () => {
  await withIndex(async ({ database, accountId, logged, questions, importing }) => {
    const withBadEnd = [...records(9_000, 2), { receipt: 'no cart, no time' }];
    await assert.rejects(importing(withBadEnd, 9_000, untilLogged(logged, /^columnar index: taking in an import's rows/)), ImportRejected);
    await untilLogged(logged, /^columnar index: the rows after id 0 of an import that did not commit taken out again$/);
    // More than the index reads beside itself (5,000): the answers below are the index's own, over the same ids.
    const written = records(8_000, 3).filter((record) => record.utm_source !== 'google');
    assert.ok(written.length > 5_000);
    await insertConversions(database, accountId, written);
    const asOf = await conversionsAsOf(database, accountId);
    assert.equal(asOf.newestId, written.length, 'the same ids again: the import rolled back');
    assert.equal((await questions().page(asOf, [], 1)).total, written.length);
    const google = await questions().page(asOf, parseFilters({ utm_source: 'google' }, conversionCatalogue, []), 1);
    assert.equal(google.total, 0, 'none of the rows taken out is counted');
  });
});

test("an import's mark takes the place of the one before it", async () => {
  await withIndex(async ({ database, accountId, logged, questions, importing }) => {
    for (const [seed, after] of [
      [7, 0],
      [8, 8_000],
    ]) {
      const imported = records(8_000, seed!);
      const takenIn = untilLogged(logged, new RegExp(`^columnar index: taking in an import's rows as it writes them, after id ${after}$`));
      assert.equal((await importing(imported, 6_000, takenIn)).inserted, imported.length);
    }
    assert.equal((await questions().page(await conversionsAsOf(database, accountId), [], 1)).total, 16_000);
    assert.equal(logged.filter((line) => line === "columnar index: an import's 8000 rows committed, taken in as it ran").length, 2, logged.join('\n'));
    const marks = await database.db.selectFrom('conversion_imports').select(['first_id', 'last_id']).execute();
    assert.deepEqual(marks, [{ first_id: 8_001, last_id: 16_000 }]);
  });
});

test("an import's copy that the index fails to take in is taken out again, and the import counted exactly once it commits", async () => {
  await withIndex(async ({ database, accountId, logged, questions, importing }) => {
    const imported = records(12_000, 6);
    // A document DuckDB cannot read fails the batch it is in.
    const unreadable = 3_000;
    const result = await importing(imported, 8_000, untilLogged(logged, /^columnar index: taking in an import's rows/), (rows) =>
      rows.map((row) => (row[0] === unreadable ? [...row.slice(0, -1), '{"cart_integration": '] : row)),
    );
    assert.equal(result.inserted, imported.length);
    const asOf = await conversionsAsOf(database, accountId);
    assert.equal((await questions().page(asOf, [], 1)).total, imported.length);
    const source = String(imported[unreadable - 1]!.utm_source);
    const fromSource = await questions().page(asOf, parseFilters({ utm_source: source }, conversionCatalogue, []), 1);
    assert.equal(fromSource.total, imported.filter((record) => record.utm_source === source).length);
    assert.ok(logged.includes('columnar index: the rows after id 0 of an import whose copy could not be taken in taken out again'), logged.join('\n'));
  });
});

test("an index closed while it takes an import's rows in takes them out as it opens, and counts the import exactly once it commits", async () => {
  await withIndex(async ({ database, accountId, logged, questions, reopen, importing }) => {
    const imported = records(10_000, 4);
    const paused = gate();
    const imports = importing(imported, 6_000, paused.closed);
    await untilLogged(logged, /^columnar index: taking in an import's rows as it writes them, after id 0$/);
    await reopen();
    assert.equal((await questions().page(await conversionsAsOf(database, accountId), [], 1)).total, 0);
    assert.ok(logged.includes('columnar index: the rows after id 0 of an import that did not commit taken out again'), logged.join('\n'));
    paused.open();
    await imports;
    assert.equal((await questions().page(await conversionsAsOf(database, accountId), [], 1)).total, imported.length);
  });
});

test('an import of 50,000 rows or more taken in as it ran is put in time order after its commit, unless its rows came in that order', async () => {
  await withIndex(async ({ database, accountId, logged, questions, importing }) => {
    const byTime = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.created_at).localeCompare(String(b.created_at));
    // A history exported oldest first, then one in no order of time.
    const oldestFirst = records(52_000, 6).sort(byTime);
    await importing(oldestFirst, 8_000, untilLogged(logged, /^columnar index: taking in an import's rows as it writes them, after id 0$/));
    await untilLogged(logged, /^columnar index: the rows after id 0 came in time order$/);
    const unordered = records(52_000, 7);
    await importing(unordered, 8_000, untilLogged(logged, /^columnar index: taking in an import's rows as it writes them, after id 52000$/));
    await untilLogged(logged, /^columnar index: the rows after id 52000 put in time order in [\d.]+ s$/);
    assert.ok(!logged.some((line) => line.startsWith('columnar index: the rows after id 0 put in time order')), logged.join('\n'));

    const all = [...oldestFirst, ...unordered];
    const times = all.map((record) => String(record.created_at)).sort();
    const [from, to] = [times[20_000]!, times[60_000]!];
    const window = parseFilters({ 'created_at.gte': from, 'created_at.lt': to }, conversionCatalogue, []);
    const inWindow = all.filter((record) => String(record.created_at) >= from && String(record.created_at) < to).length;
    assert.equal((await questions().page(await conversionsAsOf(database, accountId), window, 1)).total, inWindow);
  });
});
