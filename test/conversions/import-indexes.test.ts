import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { ImportRejected, importConversions, openSource, readRecords, type SourceRecord } from '../../src/conversions/import.js';
import { ProgressReport } from '../../src/conversions/import-report.js';
import { accountWithKey, conversionRecord, describeEachEngine, startTestApp, tempDir, type TestContext } from '../helper.js';

/**
 * A large import is a bulk load (Database.bulkLoad): on SQLite it drops the conversions'
 * secondary indexes and builds them once at its end, in its own transaction. What must hold:
 * the indexes are all back when it commits, still there when it is refused, and lists exact.
 */
describeEachEngine('large imports are bulk loads', (engine) => {
  let ctx: TestContext;
  let accountId: number;
  let key: string;

  const indexNames = async (): Promise<string[]> => {
    const query =
      engine === 'sqlite'
        ? sql<{ name: string }>`select name from conv.sqlite_master where type = 'index' and tbl_name = 'conversions' order by name`
        : sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'conversions' and schemaname = current_schema() order by indexname`;
    return (await query.execute(ctx.database.db)).rows.map((row) => row.name);
  };
  /** Imports `count` records (amount 500 on every tenth), then `extra` lines; counts the bulk loads. */
  const importRecords = async (tag: string, count: number, extra: object[] = []) => {
    let bulkLoads = 0;
    const { bulkLoad } = ctx.database;
    const values = [...Array.from({ length: count }, (_, index) => conversionRecord({ receipt: `${tag}-${index}`, amount: index % 10 === 0 ? 500 : 10 })), ...extra];
    const records: SourceRecord[] = values.map((value, index) => ({ line: index + 1, record: { value } }));
    const result = await importConversions(ctx.database, accountId, records, {
      onProblem: () => {},
      bulkLoad: (executor, table) => (bulkLoads++, bulkLoad(executor, table)),
      bulkLoadFromRows: 100,
    }).catch((error: Error) => error);
    return { result, bulkLoads };
  };
  const total = async (query: string) => {
    const response = await ctx.app.inject({ url: `/api/v1/conversions?${query}`, headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200, response.body);
    return response.json().totalEntries as number;
  };

  before(async () => {
    ctx = await startTestApp(engine);
    ({ accountId, key } = await accountWithKey(ctx.accounts, 'bulk'));
  });
  after(() => ctx.close());

  test('every index is back after the import commits, and lists count the new rows exactly', async () => {
    const indexes = await indexNames();
    assert.ok(indexes.length > 25, `the conversions have their indexes: ${indexes.join(', ')}`);
    const { result, bulkLoads } = await importRecords('big', 600);
    assert.ok(!(result instanceof Error), String(result));
    assert.equal(bulkLoads, 1);
    assert.deepEqual(await indexNames(), indexes);
    assert.equal(await total(''), 600);
    assert.equal(await total('amount=500'), 60);
    assert.equal(await total('receipt=big-599'), 1);
  });

  test('an import refused for a bad line after its indexes were dropped leaves every index and row as they were', async () => {
    const indexes = await indexNames();
    const before = await total('');
    const { result, bulkLoads } = await importRecords('refused', 300, [{ receipt: 'no cart, no date' }]);
    assert.ok(result instanceof ImportRejected, String(result));
    assert.equal(bulkLoads, 1);
    assert.deepEqual(await indexNames(), indexes);
    assert.equal(await total(''), before);
    assert.equal(await total('amount=500'), 60);
  });

  test('an import small beside the table updates the indexes row by row', async () => {
    const { result, bulkLoads } = await importRecords('small', 120);
    assert.ok(!(result instanceof Error), String(result));
    assert.equal(bulkLoads, 0, '120 rows are less than a quarter of the 600 already there');
    assert.equal(await total('amount=500'), 72);
  });

  test('a large import from a file says where it is: the percentage of the file read, each index built (SQLite), then committing', async () => {
    const folder = tempDir();
    const file = path.join(folder, 'large.ndjson');
    fs.writeFileSync(file, Array.from({ length: 1_500 }, (_, index) => `${JSON.stringify(conversionRecord({ receipt: `progress-${index}` }))}\n`).join(''));
    const printed: string[] = [];
    try {
      const source = await openSource(file);
      let now = 0;
      // Each update ten seconds after the last: every one is printed.
      const progress = new ProgressReport({ print: (line) => printed.push(line), fractionRead: source.fractionRead, now: () => (now += 10_000) });
      const result = await importConversions(ctx.database, accountId, readRecords(source.stream, 'ndjson'), {
        onProblem: (problem) => assert.fail(problem.reason),
        onProgress: (state) => progress.update(state),
        bulkLoad: ctx.database.bulkLoad,
        bulkLoadFromRows: 100,
      });
      assert.equal(result.inserted, 1_500);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
    const reading = printed.filter((line) => line.startsWith('reading: ')).map((line) => /^reading: (\d+)% \(([\d,]+) rows\)$/.exec(line));
    assert.deepEqual(reading.map((match) => match?.[2]), ['0', '1,000'], printed.join('\n'));
    const readAt1000 = Number(reading[1]![1]);
    assert.ok(readAt1000 >= 60 && readAt1000 <= 100, `two thirds of the rows are at least 60% of the file: ${readAt1000}%`);
    const indexing = printed.filter((line) => line.startsWith('indexing: ')).map((line) => /^indexing: \d+% \((\d+) of (\d+) indexes built\)$/.exec(line));
    if (engine === 'sqlite') {
      const total = Number(indexing[0]?.[2]);
      assert.ok(total > 25, printed.join('\n'));
      assert.deepEqual(indexing.map((match) => [Number(match?.[1]), Number(match?.[2])]), Array.from({ length: total + 1 }, (_, built) => [built, total]));
    } else {
      assert.deepEqual(indexing, [], 'PostgreSQL keeps its indexes through a bulk load');
    }
    assert.equal(printed.length, reading.length + indexing.length + 1);
    assert.equal(printed.at(-1), 'committing');
  });
});
