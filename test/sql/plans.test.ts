/**
 * The plans of the statements whose speed depends on the plan: the columnar index's pages and an
 * export's ids (DuckDB) must not sort every matching row, and the row store's reads by id, by
 * buyer and by folder must go through an index, not a scan of the table. The assertions are on
 * the kinds of plan node, never on costs.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { CompiledQuery } from 'kysely';
import { AccountRepository } from '../../src/accounts/repository.js';
import { AssetRepository } from '../../src/assets/repository.js';
import { assetCatalogue } from '../../src/assets/schema.js';
import { IDS_PER_QUESTION } from '../../src/conversions/export.js';
import { CONVERSION_INDEX_LAYOUT } from '../../src/conversions/questions.js';
import { CartRepository } from '../../src/carts/repository.js';
import { ConversionRepository } from '../../src/conversions/repository.js';
import { validateConversion } from '../../src/conversions/validate.js';
import { seededRandom, syntheticConversions } from '../../src/conversions/synthetic.js';
import { countAndPagesQuery, idsAfterQuery, layoutStatements, pageQuery, type DuckDbQuery } from '../../src/db/columnar/queries.js';
import { sourceStatements, withSqliteParameters } from '../../src/db/columnar/source.js';
import { FilterFacts } from '../../src/filters/list-cache.js';
import { parseListQuery } from '../../src/filters/parse.js';
import { describeEachEngine, freshDatabase, type TestDatabase } from '../helpers/database.js';
import { insertConversions } from '../helpers/fixtures.js';
import { COLUMNAR_QUESTIONS, Recorder, columnarFilters } from './snapshots.js';

interface DuckDbNode {
  name: string;
  children: DuckDbNode[];
}

const nodeNames = (node: DuckDbNode): string[] => [node.name, ...node.children.flatMap(nodeNames)];

async function duckDbPlan(connection: DuckDBConnection, { sql, params }: DuckDbQuery): Promise<string[]> {
  const result = await connection.runAndReadAll(`EXPLAIN (FORMAT json) ${sql}`, params.values, params.types);
  const [, plan] = result.getRows()[0]!;
  return (JSON.parse(String(plan)) as DuckDbNode[]).flatMap(nodeNames);
}

test("the columnar index answers a page and an export's ids with the top n ids and the count with its first pages in one aggregate, sorting no table", async () => {
  const { table, columns, hashed } = CONVERSION_INDEX_LAYOUT;
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  try {
    for (const statement of layoutStatements(table, columns, hashed)) await connection.run(statement);
    // Two accounts' rows over half a year, with every value the questions ask for, so that no
    // filter is found empty from the column's bounds alone (DuckDB would then read nothing).
    await connection.run(`INSERT INTO ${table} (id, account_id, created_at, cart_integration, amount, country, utm_source, mobile, user_id, zip_code)
      SELECT range + 1, 1 + range % 2, 1759276800 + (range * 7919) % (190 * 86400),
        ['clickbank', 'buygoods', 'digistore24', 'jvzoo'][1 + range % 4], (range * 37) % 15000 / 100,
        ['US', 'GB', 'DE', 'CA', 'FR'][1 + range % 5], ['facebook', 'google', 'tiktok', 'youtube'][1 + range % 3],
        range % 2, 'u-' || (range % 2000), lpad(CAST(range % 999 AS VARCHAR), 5, '0')
      FROM range(6000)`);
    await connection.run(
      `INSERT INTO conversion_tracking_codes SELECT range + 1, 1 + range % 2, ['tc-facebook', 'tc-1', 'tc-2', 'tc-3'][1 + range % 4] FROM range(6000)`,
    );
    await connection.run(`INSERT INTO conversion_tracking_codes SELECT range + 1, 1 + range % 2, 'tc-' || (range % 3) FROM range(0, 6000, 5)`);
    for (const { family, query } of COLUMNAR_QUESTIONS) {
      const filters = columnarFilters(query);
      const counted = await duckDbPlan(connection, countAndPagesQuery(table, 1, filters, 6000, 1));
      assert.ok(
        counted.some((name) => /AGGREGATE|GROUP_BY/.test(name)),
        `${family}: the count with its first pages is an aggregate: ${counted.join(' > ')}`,
      );
      assert.ok(!counted.some((name) => /ORDER_BY|TOP_N/.test(name)), `${family}: the count with its first pages sorts nothing: ${counted.join(' > ')}`);
      for (const afterId of [undefined, 2345]) {
        const paged = await duckDbPlan(connection, pageQuery(table, 1, filters, 6000, 12, afterId));
        const shape = afterId === undefined ? 'by offset' : 'after an id';
        assert.ok(paged.includes('TOP_N'), `${family}: a page ${shape} keeps the top n ids: ${paged.join(' > ')}`);
        assert.ok(!paged.includes('ORDER_BY'), `${family}: a page ${shape} sorts no table: ${paged.join(' > ')}`);
      }
      const exported = await duckDbPlan(connection, idsAfterQuery(table, 1, filters, 6000, 2345, IDS_PER_QUESTION));
      assert.ok(exported.includes('TOP_N') && !exported.includes('ORDER_BY'), `${family}: an export's ids keep the top n: ${exported.join(' > ')}`);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
});

const NOW = 1_767_225_600;
const FOLDERS = 30;

describeEachEngine('plans of the row store', (engine) => {
  let database: TestDatabase;
  let accountId: number;
  const recorder = new Recorder(engine);

  before(async () => {
    database = await freshDatabase(engine);
    ({ id: accountId } = await new AccountRepository(database.db).ensure('plans', 'plans', NOW));
    await insertConversions(database, accountId, [...syntheticConversions(3000, { random: seededRandom(7) })]);
    const assets = Array.from({ length: 3000 }, (_, index) => ({
      account_id: accountId,
      created_at: NOW + index,
      updated_at: NOW + index,
      name: `asset-${index}.png`,
      folder: `folder-${index % FOLDERS}`,
      image: 1,
      video: 0,
      script: 0,
      style: 0,
      text: 0,
      width: 10,
      height: 10,
      url: null,
      async: 0,
      defer: 0,
      blob_key: `blobs/${index}`,
      size: 100,
      content_type: 'image/png',
      etag: `"${index}"`,
      public_id: `p-${index}`,
      entry_json: '{}',
    }));
    for (let start = 0; start < assets.length; start += 250)
      await database.db
        .insertInto('assets')
        .values(assets.slice(start, start + 250))
        .execute();
    const events = Array.from({ length: 3000 }, (_, index) => ({
      account_id: accountId,
      received_at: NOW + index,
      occurred_at: null,
      cart: 'generic',
      event_key: `event-${index}`,
      event: 'refund',
      cart_event: 'refund',
      receipt: `R-${index}`,
      original_receipt: null,
      test: 0,
      status: 'recorded',
      problem: null,
      conversion_id: null,
      payload: '{}',
    }));
    for (let start = 0; start < events.length; start += 250) await new CartRepository(database.db).insertEvents(events.slice(start, start + 250));
    await database.refreshStatistics();
  });
  after(() => database.close());

  const plan = (statement: CompiledQuery) => planOf(database, statement);

  test('the recorder of the snapshots compiles as the database does', () => {
    const query = (db: typeof database.db) =>
      db.selectFrom('conversions').select(['id', 'entry_json']).where('account_id', '=', 1).where('id', 'in', [1, 2]).orderBy('id').limit(3);
    assert.equal(query(recorder.db).compile().sql, query(database.db).compile().sql);
  });

  test('a page of conversions is read by id through the primary key, not a scan of the table', async () => {
    const all = await database.db.selectFrom('conversions').select('id').where('account_id', '=', accountId).orderBy('id').execute();
    const page = all.filter((_, index) => index % 30 === 0).map((row) => row.id);
    assert.equal(page.length, 100);
    const [statement] = await recorder.record(
      (db) => new ConversionRepository(db, database).pageJsonByIds(accountId, page),
      [[{ found: 100, json: '', id: 1, entry_json: '{}' }]],
    );
    const lines = await plan(statement!);
    const shown = lines.join(' | ');
    if (engine === 'sqlite') {
      assert.ok(
        lines.some((line) => /^SEARCH conversions USING INTEGER PRIMARY KEY \(rowid=\?\)/.test(line)),
        `by rowid: ${shown}`,
      );
      assert.ok(!lines.some((line) => /^SCAN conversions\b/.test(line)), `no scan: ${shown}`);
    } else {
      assert.ok(
        lines.some((line) => /^(Index|Index Only|Bitmap Index) Scan .*conversions_pkey$/.test(line)),
        `through conversions_pkey: ${shown}`,
      );
      assert.ok(!lines.some((line) => /^Seq Scan conversions$/.test(line)), `no scan: ${shown}`);
    }
  });

  test("a change to an account's conversions finds the table's largest id through the primary key, not a scan of the table", async () => {
    const [statement] = await recorder.record((db) => new ConversionRepository(db, database).bumpVersion(accountId));
    const lines = await plan(statement!);
    const shown = lines.join(' | ');
    if (engine === 'sqlite') {
      assert.ok(
        lines.some((line) => /^SEARCH conversions\b/.test(line)),
        `the largest rowid: ${shown}`,
      );
      assert.ok(!lines.some((line) => /^SCAN conversions\b/.test(line)), `no scan: ${shown}`);
    } else {
      assert.ok(
        lines.some((line) => /^(Index|Index Only) Scan conversions conversions_pkey$/.test(line)),
        `through conversions_pkey: ${shown}`,
      );
      assert.ok(!lines.some((line) => line === 'Seq Scan conversions'), `no scan: ${shown}`);
    }
  });

  test("one buyer's conversions are counted and paged through the index of the account and user_id, not a scan of the table", async () => {
    const statements = await recorder.record((db) => new ConversionRepository(db, database).buyerPage(accountId, 'u-42', 2), [[{ total: 150 }]]);
    assert.equal(statements.length, 2, 'the count, then the page');
    for (const statement of statements) {
      const lines = await plan(statement);
      const shown = lines.join(' | ');
      if (engine === 'sqlite') {
        assert.ok(
          lines.some((line) => /^SEARCH conversions USING (COVERING )?INDEX conversions_account_user_id \(account_id=\? AND user_id=\?\)/.test(line)),
          `through the index: ${shown}`,
        );
        assert.ok(!lines.some((line) => /^SCAN conversions\b/.test(line)), `no scan: ${shown}`);
      } else {
        assert.ok(
          lines.some((line) => /^(Index|Index Only|Bitmap Index) Scan .*conversions_account_user_id$/.test(line)),
          `through the index: ${shown}`,
        );
        assert.ok(!lines.some((line) => line === 'Seq Scan conversions'), `no scan: ${shown}`);
      }
    }
  });

  test('a batch of cart notifications finds its repeats, and its receipts already there, through the unique indexes, not a scan', async () => {
    const keys = [7, 8, 9].map((index) => ({ account_id: accountId, cart: 'generic', event_key: `event-${index}` }));
    const [kept] = await recorder.record((db) => new CartRepository(db).keptEventKeys(keys));
    const sample = validateConversion([...syntheticConversions(1, { random: seededRandom(3) })][0]!);
    assert.ok('row' in sample);
    const stored = await database.db.selectFrom('conversions').select(['cart_integration', 'receipt']).limit(3).execute();
    const receipts = stored.map((row) => ({ ...sample.row, ...row, account_id: accountId }));
    // No row inserted (every receipt there already): the second statement reads their ids.
    const [, there] = await recorder.record((db) => new ConversionRepository(db, database).insertEach(receipts));
    for (const [table, statement] of [
      ['cart_events', kept!],
      ['conversions', there!],
    ] as const) {
      const lines = await plan(statement);
      const shown = `${table}: ${lines.join(' | ')}`;
      if (engine === 'sqlite') {
        assert.ok(
          lines.some((line) => new RegExp(`^SEARCH ${table} USING (COVERING )?INDEX \\w+ \\(account_id=\\? AND`).test(line)),
          `through an index: ${shown}`,
        );
        assert.ok(!lines.some((line) => new RegExp(`^SCAN ${table}\\b`).test(line)), `no scan: ${shown}`);
      } else {
        assert.ok(
          lines.some((line) => new RegExp(`^(Index|Index Only|Bitmap Index) Scan .*${table}_\\w+$`).test(line)),
          `through an index: ${shown}`,
        );
        assert.ok(!lines.some((line) => line === `Seq Scan ${table}`), `no scan: ${shown}`);
      }
    }
  });

  test('a list of assets by folder counts and reads its page through an index, not a scan of the table', async () => {
    const query = parseListQuery({ folder: 'folder-7' }, assetCatalogue);
    const statements = await recorder.record((db) => new AssetRepository(db).listJson({ accountId, query, facts: new FilterFacts(1000) }), [[{ count: 100 }]]);
    assert.equal(statements.length, 2, 'the count, then the page');
    for (const [index, statement] of statements.entries()) {
      const lines = await plan(statement);
      const shown = `${index === 0 ? 'the count' : 'the page'}: ${lines.join(' | ')}`;
      if (engine === 'sqlite') {
        assert.ok(
          lines.some((line) => /^SEARCH assets USING (COVERING )?INDEX \w+ \(account_id=\? AND folder=\?\)/.test(line)),
          `through an index: ${shown}`,
        );
        assert.ok(!lines.some((line) => /^SCAN assets\b/.test(line)), `no scan: ${shown}`);
      } else {
        assert.ok(
          lines.some((line) => /^(Index|Index Only|Bitmap Index) Scan .*assets_\w+$/.test(line)),
          `through an index: ${shown}`,
        );
        assert.ok(!lines.some((line) => /^Seq Scan assets$/.test(line)), `no scan: ${shown}`);
      }
    }
  });
});

/** What the planner does with a statement, one line a plan node: "SEARCH assets USING INDEX …" or "Index Scan assets conversions_pkey". */
async function planOf(database: TestDatabase, statement: CompiledQuery): Promise<string[]> {
  if (database.engine === 'sqlite') {
    const { rows } = await database.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]));
    return rows.map((row) => row.detail);
  }
  const { rows } = await database.db.executeQuery<{ 'QUERY PLAN': { Plan: PostgresNode }[] }>(
    CompiledQuery.raw(`explain (format json) ${statement.sql}`, [...statement.parameters]),
  );
  const lines = (node: PostgresNode): string[] => [
    [node['Node Type'], node['Relation Name'], node['Index Name']].filter(Boolean).join(' '),
    ...(node.Plans ?? []).flatMap(lines),
  ];
  return lines(rows[0]!['QUERY PLAN'][0]!.Plan);
}

describeEachEngine("plans of the columnar index's reads of the row store", (engine) => {
  test("one account's rows above an id are found through an index of the account, not by walking the primary key through another account's rows", async () => {
    const database = await freshDatabase(engine);
    try {
      const accounts = new AccountRepository(database.db);
      const { id: quiet } = await accounts.ensure('quiet', 'quiet', NOW);
      const { id: busy } = await accounts.ensure('busy', 'busy', NOW);
      const random = seededRandom(11);
      await insertConversions(database, quiet, [...syntheticConversions(3_000, { random })]);
      const { id: above } = await database.db
        .selectFrom('conversions')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirstOrThrow();
      await insertConversions(database, busy, [...syntheticConversions(20_000, { random })]);
      await insertConversions(database, quiet, [...syntheticConversions(20, { random })]);
      await database.refreshStatistics();
      const { table, sourceLayout } = CONVERSION_INDEX_LAYOUT;
      const { accountRowsAfter } = sourceStatements(table, [...sourceLayout.rowColumns, sourceLayout.document]);
      const statement = CompiledQuery.raw(engine === 'sqlite' ? withSqliteParameters(accountRowsAfter) : accountRowsAfter, [quiet, Number(above), 1001]);

      const { rows } = await database.db.executeQuery<Record<string, unknown>>(statement);
      assert.equal(rows.length, 20, "the account's rows above the id");
      const lines = await planOf(database, statement);
      const shown = lines.join(' | ');
      if (engine === 'sqlite') {
        assert.ok(
          lines.some((line) => /^SEARCH conversions USING (COVERING )?INDEX conversions_account\w* \(account_id=\?\)/.test(line)),
          `through an index of the account: ${shown}`,
        );
        assert.ok(!lines.some((line) => /^SCAN conversions\b|rowid>\?/.test(line)), `no walk of the table or its primary key: ${shown}`);
      } else {
        // Read by id after: at this table's size, PostgreSQL may rather hash the ids over a scan
        // than look a thousand of them up, which at a million rows it does not.
        assert.ok(
          lines.some((line) => /Scan conversions_account\w*$|Scan conversions conversions_account\w*$/.test(line)),
          `through an index of the account: ${shown}`,
        );
      }
    } finally {
      await database.close();
    }
  });
});

interface PostgresNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PostgresNode[];
}
