import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { CONVERSION_INDEX_LAYOUT } from '../../src/conversions/questions.js';
import { conversionCatalogue } from '../../src/conversions/schema.js';
import { seededRandom, syntheticConversions } from '../../src/conversions/synthetic.js';
import { validateConversion } from '../../src/conversions/validate.js';
import { hashedColumn, idsAfterQuery, incomingTableStatements, indexingStatements, INCOMING_TABLE, layoutStatements } from '../../src/db/columnar/queries.js';
import { compare, rowMatcher, unindexedRowOf } from '../../src/db/columnar/unindexed-rows.js';
import { parseFilters } from '../../src/filters/parse.js';
import { conversionRecord } from '../helpers/fixtures.js';

/**
 * Rows above the index's watermark are matched in JavaScript (unindexed-rows.ts): every filter
 * must select the very rows the index's SQL selects once it holds them.
 */

const { table, columns, hashed, sourceLayout } = CONVERSION_INDEX_LAYOUT;

/** Source rows as the index reads them (id, account, created_at, the entry), from records checked as the import checks them. */
function sourceRows(records: Record<string, unknown>[], accountOf: (index: number) => number): unknown[][] {
  return records.map((record, index) => {
    const checked = validateConversion(record);
    if (!('row' in checked)) throw new Error(checked.problems.join('; '));
    return [index + 1, accountOf(index), checked.row.created_at, checked.row.entry_json];
  });
}

/** `use` given a DuckDB connection to an index of `rows`, indexed as a catch-up indexes them. */
async function withRowsIndexed<T>(rows: unknown[][], use: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (const statement of layoutStatements(table, columns, hashed)) await connection.run(statement);
    for (const statement of incomingTableStatements(columns, hashed, sourceLayout)) await connection.run(statement);
    const appender = await connection.createAppender(INCOMING_TABLE, 'main', 'temp');
    for (const [id, accountId, createdAt, document] of rows) {
      appender.appendBigInt(BigInt(id as number));
      appender.appendBigInt(BigInt(accountId as number));
      appender.appendBigInt(BigInt(createdAt as number));
      appender.appendVarchar(document as string);
      appender.endRow();
    }
    appender.closeSync();
    for (const statement of indexingStatements(table, columns, hashed, sourceLayout)) await connection.run(statement);
    return await use(connection);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The ids the index's own statements select for `query` in `account`. */
function idsFromTheIndex(rows: unknown[][], account: number, queries: string[]): Promise<number[][]> {
  return withRowsIndexed(rows, async (connection) => {
    const answers: number[][] = [];
    for (const query of queries) {
      const filters = parseFilters(Object.fromEntries(new URLSearchParams(query)), conversionCatalogue, []);
      const { sql, params } = idsAfterQuery(table, account, filters, rows.length, 0, rows.length);
      answers.push((await connection.runAndReadAll(sql, params.values, params.types)).getRows().map((row) => Number(row[0])));
    }
    return answers;
  });
}

function idsInJavaScript(rows: unknown[][], account: number, query: string): number[] {
  const matches = rowMatcher(parseFilters(Object.fromEntries(new URLSearchParams(query)), conversionCatalogue, []));
  return rows
    .map((row) => unindexedRowOf(row, columns, hashed, sourceLayout))
    .filter((row) => row.accountId === account && matches(row))
    .map((row) => row.id);
}

/** Filters drawn from the records' own values, over every column type and modifier. */
function randomQueries(records: Record<string, unknown>[], count: number, seed: number): string[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const drawnValue = (name: string): string => {
    const value = pick(records)[name];
    const one = Array.isArray(value) ? (value[0] ?? 'none') : value;
    if (one === null || one === undefined) return name === 'mobile' ? 't' : 'absent';
    if (name === 'created_at') return random() < 0.5 ? String(one).slice(0, 10) : String(one);
    if (typeof one === 'boolean') return one ? 't' : 'f';
    if (conversionCatalogue.get(name)!.type === 'number' && random() < 0.3) return String(Math.round((one as number) * 1000 + 7) / 1000);
    return String(one);
  };
  const names = [...conversionCatalogue.keys()].filter((name) => name !== 'id');
  const queries: string[] = [];
  for (let index = 0; index < count; index++) {
    const params = new URLSearchParams();
    for (let filter = 0; filter < 1 + Math.floor(random() * 3); filter++) {
      const name = pick(names);
      const modifier = name === 'mobile' ? '' : pick(['', '', '.gt', '.gte', '.lt', '.lte', '.between', '.in']);
      const value =
        modifier === '.between'
          ? [drawnValue(name), drawnValue(name)].sort((a, b) => (Number.isNaN(Number(a)) ? compare(a, b) : Number(a) - Number(b))).join(',')
          : modifier === '.in'
            ? [drawnValue(name), drawnValue(name), drawnValue(name)].join(',')
            : drawnValue(name);
      params.set(`${name}${modifier}`, value);
    }
    if (random() < 0.2) params.set('id.gt', String(Math.floor(random() * records.length)));
    queries.push(params.toString());
  }
  return queries;
}

test('filters on rows not yet indexed select exactly the rows the index selects, in every account', async () => {
  const records = [...syntheticConversions(600, { random: seededRandom(37) })];
  // Text whose order differs between UTF-16 and UTF-8, nulls, empty arrays and codes shared by two rows.
  records.push(
    conversionRecord({ receipt: 'T-1', vendor: '\uFF5Ewide', utm_campaign: 'x', tracking_codes: ['😀', 'tc-1'] }),
    conversionRecord({ receipt: 'T-2', vendor: '😀astral', utm_campaign: null, tracking_codes: [] }),
    conversionRecord({ receipt: 'T-3', vendor: 'plain', affiliate: null, mobile: null, amount: 19.999, tracking_codes: ['tc-1', 'tc-1'] }),
  );
  const rows = sourceRows(records, (index) => 1 + (index % 2));
  const queries = [
    'vendor.gt=\uFF5E',
    'vendor.lt=\uFF5E',
    'vendor.between=plain,😀',
    'tracking_codes.gte=😀',
    'tracking_codes=tc-1&tracking_codes.in=😀,tc-2',
    'mobile=f',
    'amount.gte=19.999',
    'amount.lt=20',
    'affiliate.in=aff_alpha,aff_bravo',
    'created_at.between=2025-03-01,2025-06-30',
    ...randomQueries(records, 300, 38),
  ];
  for (const account of [1, 2]) {
    const fromTheIndex = await idsFromTheIndex(rows, account, queries);
    for (const [index, query] of queries.entries()) {
      assert.deepEqual(idsInJavaScript(rows, account, query), fromTheIndex[index], `account ${account}: ${query}`);
    }
    assert.ok(fromTheIndex.filter((ids) => ids.length > 0).length > queries.length / 4, 'many questions match some rows');
  }
});

test("rows not yet indexed hash each buyer's e-mail address as the index does", async () => {
  const records = [...syntheticConversions(50, { random: seededRandom(39) })];
  records.push(conversionRecord({ receipt: 'T-1', email: 'Zoe.Buyer+tag@example.com' }), conversionRecord({ receipt: 'T-2', email: null }));
  const rows = sourceRows(records, () => 1);
  const fromTheIndex = await withRowsIndexed(rows, async (connection) =>
    (await connection.runAndReadAll(`SELECT id, ${hashedColumn('email')} FROM ${table} ORDER BY id`)).getRows().map(([id, hash]) => [Number(id), hash]),
  );
  const inJavaScript = rows.map((row) => unindexedRowOf(row, columns, hashed, sourceLayout)).map((row) => [row.id, row.hashes.email]);
  assert.deepEqual(inJavaScript, fromTheIndex);
  assert.equal(inJavaScript.at(-1)![1], null);
});

for (const [a, b, expected] of [
  [1, 2, -1],
  [2.5, 2.5, 0],
  ['b', 'a', 1],
  ['abc', 'abd', -1],
  ['\uFF5E', '😀', -1], // UTF-16 would put the astral character (a surrogate pair) first
  ['😀', '\uFFFD', 1],
  ['', 'a', -1],
] as const) {
  test(`${JSON.stringify(a)} compares with ${JSON.stringify(b)} as ${expected}, as DuckDB orders them`, () => {
    assert.equal(compare(a, b), expected);
  });
}
