/**
 * The SQL each repository sends, per engine, and the SQL of the columnar index, written out by
 * `npm run sql:update` (update.ts) to the .sql files beside this one, which are committed: a
 * change to a query shows in review as a diff of its SQL, and snapshots.test.ts fails while the
 * files and the code disagree.
 *
 * The SQL is what Kysely compiles for each dialect, recorded by a driver that runs nothing; the
 * columnar index's is what src/db/columnar/queries.ts builds. Parameters stay placeholders, so
 * the output depends only on the code and the examples below.
 */
import {
  Kysely,
  PostgresDialect,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import { AccountRepository } from '../../src/accounts/repository.js';
import { AssetRepository, type AssetRow } from '../../src/assets/repository.js';
import { assetCatalogue } from '../../src/assets/schema.js';
import { CartRepository, type NewCartEvent } from '../../src/carts/repository.js';
import { cartEventCatalogue } from '../../src/carts/schema.js';
import { EXPORT_BATCH } from '../../src/conversions/export.js';
import { CONVERSION_INDEX_LAYOUT } from '../../src/conversions/questions.js';
import { ConversionRepository, type NewConversion } from '../../src/conversions/repository.js';
import { conversionCatalogue } from '../../src/conversions/schema.js';
import { seededRandom, syntheticConversions } from '../../src/conversions/synthetic.js';
import { validateConversion } from '../../src/conversions/validate.js';
import {
  countAndPagesQuery,
  createdAtWindowsQuery,
  notWholeCentsQuery,
  countQuery,
  idsAfterQuery,
  incomingTableStatements,
  indexingStatements,
  layoutStatements,
  pageQuery,
  summaryQueries,
  type DuckDbQuery,
  type GroupKey,
} from '../../src/db/columnar/queries.js';
import { offsetSpans } from '../../src/db/columnar/time-zones.js';
import type { UnindexedRow } from '../../src/db/columnar/unindexed-rows.js';
import { postgresSql } from '../../src/db/postgres/database.js';
import type { DatabaseSchema } from '../../src/db/schema.js';
import { sqliteSql } from '../../src/db/sqlite/database.js';
import type { Catalogue } from '../../src/filters/catalogue.js';
import { FilterFacts } from '../../src/filters/list-cache.js';
import { PAGE_SIZE } from '../../src/filters/list.js';
import { parseListQuery, type ListQuery } from '../../src/filters/parse.js';

export type Engine = 'sqlite' | 'postgres';
type Row = Record<string, unknown>;

/**
 * A Kysely of one engine's dialect whose driver runs nothing: it keeps every compiled statement
 * and answers each with the rows it was given (none by default), so that a repository method
 * runs to its end and shows every statement it sends. The dialects are those src/db builds its
 * Kysely instances with (SQLite's adapter and compiler, there over the service's own driver;
 * Kysely's PostgresDialect, there over a pg pool); plans.test.ts checks that the two compile alike.
 */
export class Recorder {
  readonly db: Kysely<DatabaseSchema>;
  private statements: CompiledQuery[] = [];
  private answers: Row[][] = [];

  constructor(readonly engine: Engine) {
    const connection: DatabaseConnection = {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        this.statements.push(query);
        return { rows: (this.answers.shift() ?? []) as R[] };
      },
      streamQuery: () => {
        throw new Error('the recorder does not stream');
      },
    };
    const driver: Driver = {
      init: async () => {},
      acquireConnection: async () => connection,
      beginTransaction: async () => {},
      commitTransaction: async () => {},
      rollbackTransaction: async () => {},
      releaseConnection: async () => {},
      destroy: async () => {},
    };
    const postgres = new PostgresDialect({
      pool: async () => {
        throw new Error('the recorder connects to nothing');
      },
    });
    const dialect: Dialect =
      engine === 'sqlite'
        ? {
            createAdapter: () => new SqliteAdapter(),
            createDriver: () => driver,
            createIntrospector: (db) => new SqliteIntrospector(db),
            createQueryCompiler: () => new SqliteQueryCompiler(),
          }
        : {
            createAdapter: () => postgres.createAdapter(),
            createDriver: () => driver,
            createIntrospector: (db) => postgres.createIntrospector(db),
            createQueryCompiler: () => postgres.createQueryCompiler(),
          };
    this.db = new Kysely<DatabaseSchema>({ dialect });
  }

  /** The statements `call` sends, answered in turn by `answers` (no rows once they run out). */
  async record(call: (db: Kysely<DatabaseSchema>, engine: Engine) => Promise<unknown>, answers: Row[][] = []): Promise<CompiledQuery[]> {
    this.statements = [];
    this.answers = [...answers];
    await call(this.db, this.engine);
    return this.statements;
  }
}

/** One call of a repository method, with the arguments the snapshot shows it with. */
export interface Example {
  /** The repository's snapshot file, without engine and extension. */
  file: string;
  className: string;
  method: string;
  /** The call as the comment shows it. */
  call: string;
  run: (db: Kysely<DatabaseSchema>, engine: Engine) => Promise<unknown>;
  /** Rows answering the statements in turn, where the method goes on with what it read. */
  answers?: Row[][];
}

type Methods<Repo> = { [K in keyof Repo]: Repo[K] extends (...args: any[]) => Promise<unknown> ? K : never }[keyof Repo] & string;
type Args<F> = F extends (...args: infer A) => unknown ? A : never;
interface Shown {
  /** Shown instead of the arguments, where they are too long to read. */
  shown?: string;
  /** What the answers make of the call, such as "the account is new". */
  when?: string;
  answers?: Row[][];
}

/**
 * Examples of the methods of one repository class, which `make` builds on a Kysely. Arguments
 * that a call changes (a list's facts) are given as a function, which makes them anew each run.
 */
function examplesOf<Repo>(file: string, className: string, make: (db: Kysely<DatabaseSchema>, engine: Engine) => Repo) {
  return <M extends Methods<Repo>>(method: M, args: Args<Repo[M]> | (() => Args<Repo[M]>), { shown, when, answers }: Shown = {}): Example => {
    const argsOf = typeof args === 'function' ? args : () => args;
    return {
      file,
      className,
      method,
      call: `${className}.${method}(${
        shown ??
        argsOf()
          .map((arg) => JSON.stringify(arg))
          .join(', ')
      })${when ? `, ${when}` : ''}`,
      run: (db, engine) => {
        const repository = make(db, engine);
        return (repository[method] as (...args: unknown[]) => Promise<unknown>).apply(repository, argsOf());
      },
      answers,
    };
  };
}

const ACCOUNT = 1;
const NOW = 1_767_225_600; // 2026-01-01T00:00:00Z
const KEY_HASH = 'sha256 of the key, hex';

/** A list request as a service hands it over, from its query string and what earlier pages taught. */
function list(
  catalogue: Catalogue,
  queryString: string,
  learn: (facts: FilterFacts) => void = () => {},
): { accountId: number; query: ListQuery; facts: FilterFacts } {
  const query = parseListQuery(Object.fromEntries(new URLSearchParams(queryString)), catalogue);
  const facts = new FilterFacts(1000);
  learn(facts);
  return { accountId: ACCOUNT, query, facts };
}

const ids = (first: number, count: number) => Array.from({ length: count }, (_, index) => first + index);

const ASSET: AssetRow = {
  id: 42,
  account_id: ACCOUNT,
  created_at: NOW,
  updated_at: NOW,
  name: 'logo.png',
  folder: 'images',
  image: 1,
  video: 0,
  script: 0,
  style: 0,
  text: 0,
  width: 120,
  height: 40,
  url: null,
  async: 0,
  defer: 0,
  blob_key: 'blobs/3f/3f2a',
  size: 2048,
  content_type: 'image/png',
  etag: '"3f2a"',
  public_id: 'p-3f2a',
  entry_json: '{}',
};
const { id: _id, entry_json: _entryJson, ...NEW_ASSET } = ASSET;

function newConversions(count: number): NewConversion[] {
  return [...syntheticConversions(count, { random: seededRandom(1) })].map((record) => {
    const result = validateConversion(record);
    if (!('row' in result)) throw new Error(`a synthetic conversion is invalid: ${result.problems.join('; ')}`);
    return result.row;
  });
}

/** Two conversions as cart notifications make them, with their account, and each as the database returns it under an id. */
const NOTIFIED = newConversions(2).map((row) => ({ ...row, account_id: ACCOUNT }));
const notifiedAs = (id: number, row: (typeof NOTIFIED)[number]) => ({ id, account_id: ACCOUNT, cart_integration: row.cart_integration, receipt: row.receipt });

const REFUND: NewCartEvent = {
  account_id: ACCOUNT,
  received_at: NOW,
  occurred_at: NOW - 5,
  cart: 'digistore',
  event_key: '23650507/on_refund',
  event: 'refund',
  cart_event: 'on_refund',
  receipt: 'RJXCW823',
  original_receipt: null,
  test: 0,
  status: 'recorded',
  problem: null,
  conversion_id: null,
  payload: 'event=on_refund&order_id=RJXCW823&...',
};

const account = examplesOf('accounts', 'AccountRepository', (db) => new AccountRepository(db));
const asset = examplesOf('assets', 'AssetRepository', (db) => new AssetRepository(db));
const conversion = examplesOf('conversions', 'ConversionRepository', (db, engine) => new ConversionRepository(db, ENGINE_SQL[engine]));
const ENGINE_SQL = { sqlite: sqliteSql, postgres: postgresSql };
const cart = examplesOf('carts', 'CartRepository', (db) => new CartRepository(db));

/** Every repository method, called as the service calls it; snapshots.test.ts checks that none is missing. */
export const EXAMPLES: Example[] = [
  account('findByName', ['default']),
  account('ensure', ['default', 'k3x9', NOW], { when: 'the account not there yet', answers: [[], [], [{ id: ACCOUNT }]] }),
  account('addKey', [ACCOUNT, 'acds_k3x9', KEY_HASH, NOW], { when: 'the key not there yet' }),
  account('addKey', [ACCOUNT, 'Tr0u', KEY_HASH, NOW], { when: 'the key there already', answers: [[{ id: 7 }]] }),
  account('accountForKey', [KEY_HASH]),
  account('bumpDataVersion', [ACCOUNT]),
  account('exists', [ACCOUNT]),
  account('removeIfEmpty', [ACCOUNT]),
  account('listKeys', [ACCOUNT]),
  account('keysWithPrefix', ['acds_k3x9']),
  account('revokeKey', [7, NOW]),

  asset('listJson', () => [list(assetCatalogue, 'folder=images')], {
    shown: 'account 1, "folder=images"',
    when: 'nothing known yet: the count, then page 1',
    answers: [[{ count: 250 }]],
  }),
  asset('listJson', () => [list(assetCatalogue, 'image=true&created_at.in=2026-01-01,2026-01-02&width.gte=100')], {
    shown: 'account 1, "image=true&created_at.in=2026-01-01,2026-01-02&width.gte=100"',
    when: 'nothing known yet: the count, then page 1',
    answers: [[{ count: 250 }]],
  }),
  asset('listJson', () => [list(assetCatalogue, 'page=2')], {
    shown: 'account 1, "page=2"',
    when: 'nothing known yet: the count, then page 2 by offset',
    answers: [[{ count: 250 }]],
  }),
  asset(
    'listJson',
    () => [
      list(assetCatalogue, 'folder=images&page=3', (facts) => {
        facts.total = 250;
        facts.learnPage(2, ids(1101, PAGE_SIZE), PAGE_SIZE);
      }),
    ],
    { shown: 'account 1, "folder=images&page=3"', when: 'the count and where page 3 starts known: page 3 from its first id' },
  ),
  asset(
    'listJson',
    () => [
      list(assetCatalogue, 'folder=images&page=5', (facts) => {
        facts.total = 1000;
        facts.learnPage(2, ids(1101, PAGE_SIZE), PAGE_SIZE);
      }),
    ],
    { shown: 'account 1, "folder=images&page=5"', when: 'the count and where page 3 starts known: page 5 from there by offset' },
  ),
  asset('find', [ACCOUNT, 42]),
  asset('findPublic', ['k3x9', 'p-3f2a']),
  asset('handleOf', [ACCOUNT], { answers: [[{ handle: 'k3x9' }]] }),
  asset('insert', [NEW_ASSET], { shown: 'a local image "images/logo.png"', answers: [[{ id: 42 }]] }),
  asset('update', [ASSET, { name: 'logo-2.png', folder: 'brand', updated_at: NOW + 60 }], {
    shown: 'a local image, { name: "logo-2.png", folder: "brand", updated_at }',
    when: 'renamed and moved, its bytes unchanged',
  }),
  asset(
    'update',
    [
      { ...ASSET, blob_key: null, url: 'https://cdn.example.com/logo.png' },
      { width: 240, height: 80, updated_at: NOW + 60 },
    ],
    {
      shown: 'a remote image, { width: 240, height: 80, updated_at }',
      when: 'an asset without bytes',
    },
  ),
  asset('delete', [ACCOUNT, 42]),
  asset('folderExists', [ACCOUNT, 'images/2026']),
  asset('journalBlob', ['blobs/3f/3f2a', NOW]),
  asset('forgetBlob', ['blobs/3f/3f2a']),
  asset('claimOrphan', ['blobs/3f/3f2a']),
  asset('orphanedBlobs', [NOW - 3600]),

  // One answer for both engines' statements, as below: SQLite's joined page, PostgreSQL's rows.
  conversion('pageJsonByIds', [ACCOUNT, [101, 102, 103]], {
    when: 'a page sends up to 100 ids',
    answers: [[{ found: 1, json: '', id: 101, entry_json: '{}' }]],
  }),
  conversion('entriesByIds', [ACCOUNT, [101, 102, 103]], { when: `an export to CSV sends up to ${EXPORT_BATCH.toLocaleString('en-US')} ids` }),
  conversion('buyerPage', [ACCOUNT, 'u-42', 2], { when: "one buyer's second page", answers: [[{ total: 150 }]] }),
  conversion('ndjsonByIds', [ACCOUNT, [101, 102, 103]], {
    when: `an export sends up to ${EXPORT_BATCH.toLocaleString('en-US')} ids`,
    answers: [[{ lines: '', id: 101, entry_json: '{}' }]],
  }),
  conversion('bumpVersion', [ACCOUNT]),
  conversion('insertNew', [ACCOUNT, newConversions(2)], { shown: '1, two conversions', when: 'an import sends its rows in batches' }),
  conversion('largestId', [], { when: 'an import begins its advance copy (advance-copy.ts)', answers: [[{ id: 100 }]] }),
  conversion('idsAfter', [100, 5_001], { when: 'an import copies 5,000 new rows: their ids', answers: [[{ id: 101 }]] }),
  conversion('rowsAfter', [100, 5_000, ['created_at', 'entry_json']], { when: 'an import copies rows some of which were there already' }),
  conversion('markImport', ['3b7c0e5e-1f5a-4b61-9d55-0c2a43d0a1b2', 101, 5_100], { when: "an import's transaction marks the rows it copied" }),
  conversion('insertEach', [NOTIFIED], {
    shown: 'two conversions of account 1',
    when: 'new receipts',
    answers: [[notifiedAs(42, NOTIFIED[0]!), notifiedAs(43, NOTIFIED[1]!)]],
  }),
  conversion('insertEach', [NOTIFIED], {
    shown: 'two conversions of account 1',
    when: 'the second receipt there already',
    answers: [[notifiedAs(42, NOTIFIED[0]!)], [notifiedAs(7, NOTIFIED[1]!)]],
  }),

  cart(
    'connect',
    [{ account_id: ACCOUNT, cart: 'clickbank', token_hash: 'sha256 of the token, hex', token_prefix: 'Xq3kP0', secret: 'CBSECRET', created_at: NOW }],
    {
      when: 'connected, or connected again',
    },
  ),
  cart('receivers', [ACCOUNT]),
  cart('disconnect', [ACCOUNT, 'clickbank']),
  cart('findByTokenHash', ['sha256 of the token, hex']),
  cart('connectedTokenHashes', [['sha256 of one token, hex', 'sha256 of another, hex']], { shown: 'the hashes of two tokens' }),
  cart('keptEventKeys', [[REFUND, { ...REFUND, event_key: '23650508/on_refund' }]], { shown: 'the keys of two Digistore24 refunds' }),
  cart('insertEvents', [[REFUND, { ...REFUND, event_key: '23650508/on_refund' }]], { shown: 'two Digistore24 refunds' }),
  cart('listEvents', () => [list(cartEventCatalogue, 'event=refund&received_at.gte=2026-01-01')], {
    shown: 'account 1, "event=refund&received_at.gte=2026-01-01"',
    when: 'nothing known yet: the count, then page 1',
    answers: [[{ count: 250 }]],
  }),
];

/** The questions of the columnar index that the snapshots and the plan tests show: the cold families of the benchmark and more. */
export const COLUMNAR_QUESTIONS: { family: string; query: string }[] = [
  { family: 'a window and a utm_source', query: 'created_at.between=2026-01-01,2026-01-31&utm_source=facebook' },
  { family: 'two carts and an amount', query: 'cart_integration.in=clickbank,buygoods&amount.gte=30' },
  { family: 'a country and a window', query: 'country=US&created_at.between=2025-10-01,2026-03-31' },
  { family: 'tracking codes', query: 'tracking_codes=tc-facebook&tracking_codes.in=tc-1,tc-2' },
  { family: 'one buyer', query: 'user_id=u-1234' },
  { family: 'days and a mobile flag', query: 'created_at.in=2026-01-01,2026-01-02&mobile=true' },
  { family: 'everything', query: '' },
];

export const columnarFilters = (query: string) => parseListQuery(Object.fromEntries(new URLSearchParams(query)), conversionCatalogue).filters;

/** A columnar statement with the call that builds it. */
export interface ColumnarExample {
  call: string;
  query: DuckDbQuery;
}

/** Each question in the three shapes the index asks it: count with the first pages, a page by offset, a page after a known id; and the count above an id for one. */
export function columnarExamples(): ColumnarExample[] {
  const { table } = CONVERSION_INDEX_LAYOUT;
  const examples: ColumnarExample[] = [];
  for (const { query } of COLUMNAR_QUESTIONS) {
    const filters = columnarFilters(query);
    const shown = JSON.stringify(query);
    examples.push(
      { call: `countAndPagesQuery("${table}", ${ACCOUNT}, ${shown}, upTo, 1)`, query: countAndPagesQuery(table, ACCOUNT, filters, 50_000, 1) },
      { call: `pageQuery("${table}", ${ACCOUNT}, ${shown}, upTo, 12, undefined)`, query: pageQuery(table, ACCOUNT, filters, 50_000, 12, undefined) },
      { call: `pageQuery("${table}", ${ACCOUNT}, ${shown}, upTo, 12, 41017)`, query: pageQuery(table, ACCOUNT, filters, 50_000, 12, 41_017) },
    );
  }
  const [first] = COLUMNAR_QUESTIONS;
  examples.push({
    call: `countQuery("${table}", ${ACCOUNT}, ${JSON.stringify(first!.query)}, above, upTo)`,
    query: countQuery(table, ACCOUNT, columnarFilters(first!.query), 40_000, 50_000),
  });
  examples.push({
    call: `idsAfterQuery("${table}", ${ACCOUNT}, ${JSON.stringify(first!.query)}, upTo, afterId, 2000)`,
    query: idsAfterQuery(table, ACCOUNT, columnarFilters(first!.query), 50_000, 41_017, 2_000),
  });
  examples.push({
    call: `createdAtWindowsQuery("${table}", ${ACCOUNT}, above, upTo)`,
    query: createdAtWindowsQuery(table, ACCOUNT, 40_000, 50_000),
  });
  examples.push({
    call: `notWholeCentsQuery("${table}", ${ACCOUNT}, above, upTo)`,
    query: notWholeCentsQuery(table, ACCOUNT, 40_000, 50_000),
  });
  // Summaries: a quarter by day and source, in a time zone; everything by month and cart; by each tracking code.
  const column = (name: string): GroupKey => ({ column: conversionCatalogue.get(name)! });
  for (const [query, keys, shownKeys] of [
    ['created_at.between=2026-01-01,2026-03-31', [{ bucket: 'day' }, column('utm_source')], 'day,utm_source'],
    ['', [{ bucket: 'month' }, column('cart_integration')], 'month,cart_integration'],
    ['utm_source=facebook', [column('tracking_codes')], 'tracking_codes'],
  ] as const) {
    // New York over 2026, whose offset changes twice.
    const [from, to] = [Date.parse('2026-01-01T00:00:00Z') / 1000, Date.parse('2027-01-01T00:00:00Z') / 1000];
    const localTime = { offsets: offsetSpans('America/New_York', from, to), from, to };
    const { groups, totals } = summaryQueries(table, ACCOUNT, columnarFilters(query), 50_000, [...keys], localTime);
    const call = `summaryQueries("${table}", ${ACCOUNT}, ${JSON.stringify(query)}, upTo, "${shownKeys}", New York's local time over 2026)`;
    examples.push({ call: `${call}.groups`, query: groups }, { call: `${call}.totals`, query: totals });
  }
  // A summary while rows arrive: two rows above the watermark, which reach the statement as one JSON text.
  const beyond: UnindexedRow[] = [50_001, 50_002].map((id) => ({
    id,
    accountId: ACCOUNT,
    values: { created_at: 1_780_000_000 + id, amount: 19.99, tax_amount: 0, shipping_amount: null, utm_source: 'facebook', tracking_codes: ['tc-1', 'tc-2'] },
    hashes: { email: 1234567890123456789n },
  }));
  const noLocalTime = { offsets: [], from: 0, to: 0 };
  const { groups, totals } = summaryQueries(table, ACCOUNT, columnarFilters('utm_source=facebook'), 50_000, [column('tracking_codes')], noLocalTime, beyond);
  const call = `summaryQueries("${table}", ${ACCOUNT}, "utm_source=facebook", upTo, "tracking_codes", no local time, two rows beyond upTo)`;
  examples.push({ call: `${call}.groups`, query: groups }, { call: `${call}.totals`, query: totals });
  // An account with money that is not whole cents: those values summed apart as decimals.
  const [from, to] = [Date.parse('2026-01-01T00:00:00Z') / 1000, Date.parse('2027-01-01T00:00:00Z') / 1000];
  const exact = summaryQueries(table, ACCOUNT, [], 50_000, [{ bucket: 'month' }], { offsets: [], from, to }, [], true);
  examples.push({
    call: `summaryQueries("${table}", ${ACCOUNT}, "", upTo, "month", UTC over 2026, with the fix of money that is not whole cents).groups`,
    query: exact.groups,
  });
  return examples;
}

/** The folders of test/sql/ that hold snapshots, one an engine. */
export const SNAPSHOT_DIRS = ['sqlite', 'postgres', 'duckdb'];

const HEADER = '-- Written by `npm run sql:update` (test/sql/snapshots.ts); test/sql/snapshots.test.ts fails when the code sends other SQL.\n';

/** The snapshot files, by path relative to test/sql/, as the code makes them now. */
export async function snapshotFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const add = (path: string, block: string) => files.set(path, `${files.get(path) ?? HEADER}\n${block}`);
  for (const engine of ['sqlite', 'postgres'] as const) {
    const recorder = new Recorder(engine);
    for (const example of EXAMPLES) {
      const statements = await recorder.record(example.run, example.answers);
      if (statements.length === 0) throw new Error(`${example.call} sent no statement`);
      statements.forEach((statement, index) => {
        const part = statements.length > 1 ? ` [${index + 1} of ${statements.length}]` : '';
        add(`${engine}/${example.file}.sql`, `-- ${example.call}${part}\n${formatSql(statement.sql)};\n`);
      });
    }
  }
  const { table, columns, hashed, sourceLayout } = CONVERSION_INDEX_LAYOUT;
  const statements = (call: string, list: string[]) =>
    add('duckdb/columnar.sql', `-- ${call}\n${list.map((statement) => `${formatSql(statement)};`).join('\n')}\n`);
  statements(`layoutStatements("${table}", the filterable columns, ${JSON.stringify(hashed)})`, layoutStatements(table, columns, hashed));
  statements(
    `incomingTableStatements(the filterable columns, ${JSON.stringify(hashed)}, ${JSON.stringify(sourceLayout)})`,
    incomingTableStatements(columns, hashed, sourceLayout),
  );
  statements(
    `indexingStatements("${table}", the filterable columns, ${JSON.stringify(hashed)}, ${JSON.stringify(sourceLayout)})`,
    indexingStatements(table, columns, hashed, sourceLayout),
  );
  for (const { call, query } of columnarExamples()) add('duckdb/columnar.sql', `-- ${call}\n${formatSql(query.sql)};\n`);
  return files;
}

// Clauses that start a line of their own; those inside parentheses (subqueries) stay on their line.
const CLAUSES = [
  'select',
  'from',
  'inner join',
  'left join',
  'where',
  'group by',
  'order by',
  'limit',
  'offset',
  'values',
  'on conflict',
  'returning',
  'set',
  'intersect',
  'union',
];

/**
 * Puts each top-level clause of a statement on a line of its own, and each row of a multi-row
 * VALUES: whitespace outside quotes is all that changes, so the statement is the one sent.
 */
export function formatSql(sql: string): string {
  const tokens = sql.match(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\s+|[A-Za-z_][A-Za-z0-9_]*|./gs) ?? [];
  const words = (from: number, count: number) => {
    const found: string[] = [];
    for (let index = from; index < tokens.length && found.length < count; index++) if (!/^\s+$/.test(tokens[index]!)) found.push(tokens[index]!.toLowerCase());
    return found.join(' ');
  };
  let out = '';
  let depth = 0;
  let clause = '';
  let previousWord = '';
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (token === '(') depth++;
    if (token === ')') depth--;
    if (depth === 0 && /^[A-Za-z_]/.test(token)) {
      const starts = CLAUSES.find((name) => words(index, name.split(' ').length) === name);
      if (starts && out.trim() !== '' && !(starts === 'from' && previousWord === 'delete')) {
        out = `${out.trimEnd()}\n`;
        clause = starts;
      }
      previousWord = token.toLowerCase();
    }
    if (token === ',' && depth === 0 && clause === 'values') {
      out += `,\n${' '.repeat('values '.length)}`;
      while (/^\s+$/.test(tokens[index + 1] ?? '')) index++;
      continue;
    }
    out += token;
  }
  return out.trim();
}
