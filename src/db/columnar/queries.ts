import type { FilterColumn } from '../../filters/catalogue.js';
import { PAGE_SIZE } from '../../filters/list.js';
import type { Filter } from '../../filters/parse.js';
import { BoundParams, duckDbType, filtersToDuckDb } from './filters.js';
import { centsOf, moneyFixSql, twiceMillionths } from './money.js';
import { isRanked, rankedColumn, rankOf, rankSql } from './number-rank.js';
import { MAX_SUMMARY_GROUPS, type SourceLayout, type SummaryRows, type TimeBucket } from './protocol.js';
import { type OffsetSpan, WINDOW_SECONDS } from './time-zones.js';
import type { UnindexedRow } from './unindexed-rows.js';

/**
 * The SQL of the columnar index (index-process.ts), built by pure functions so that the snapshots of
 * test/sql/ show what the index sends and tests can EXPLAIN the very same statements.
 */

/**
 * What the index's DuckDB database is opened with. Its allocator keeps what a large catch-up or
 * summary freed unless a thread of its own hands it back to the system. It checkpoints by itself
 * once its log reaches checkpoint_threshold, rewriting the last row groups each time: at the
 * default (16 MB) a long catch-up spent a third of its time doing so, and at more than the memory
 * limit the rows appended since left a commit no room (the index also checkpoints after a large
 * catch-up, index-process.ts). Nothing the index holds must stay in memory: an ART index would,
 * and failed the catch-up once it outgrew the limit (1,500,000 rows at 128 MB).
 */
export function duckDbSettings(memoryLimit: string, threads: number): Record<string, string> {
  return { memory_limit: memoryLimit, threads: String(threads), allocator_background_threads: 'true', checkpoint_threshold: memoryLimit };
}

/** A statement for DuckDB with its parameters, each with its type. */
export interface DuckDbQuery {
  sql: string;
  params: BoundParams;
}

/**
 * The derived tables of `table`: one row a source row with its scalar columns and the hashes of
 * its hashed ones, and a table of its own for each array column (one row an element).
 */
export function layoutStatements(table: string, columns: FilterColumn[], hashed: string[]): string[] {
  const scalarColumns = columns.filter((column) => !column.storage);
  const definitions = [
    ...scalarColumns.map((column) => `${column.name} ${duckDbType(column.type)}`),
    ...columns.filter(isRanked).map((column) => `${rankedColumn(column.name)} BIGINT`),
    ...hashed.map((name) => `${hashedColumn(name)} UBIGINT`),
  ];
  const statements = [`DROP TABLE IF EXISTS ${table}`, `CREATE TABLE ${table} (id BIGINT NOT NULL, account_id BIGINT NOT NULL, ${definitions.join(', ')})`];
  for (const { storage } of columns.filter((column) => column.storage)) {
    statements.push(`DROP TABLE IF EXISTS ${storage!.table}`);
    statements.push(
      `CREATE TABLE ${storage!.table} (${storage!.parentColumn} BIGINT NOT NULL, account_id BIGINT NOT NULL, ${storage!.valueColumn} VARCHAR NOT NULL)`,
    );
  }
  return statements;
}

/**
 * Rewrites the rows of `table` after id `afterId` in order of `created_at`. DuckDB skips the row
 * groups whose range of a column a filter excludes, so a table in time order reads, for a
 * question of a time window, only the row groups of that window. Rows arriving one by one come in
 * time order; an import or a rebuild may bring them in any order, and a large catch-up ends with
 * this. The array columns' tables hold ids, in no order that matters.
 */
export function reorderByTimeStatements(table: string, afterId: number): DuckDbQuery[] {
  const after = () => new BoundParams(afterId);
  return [
    { sql: `CREATE OR REPLACE TEMP TABLE reordered AS SELECT * FROM ${table} WHERE id > $1::BIGINT ORDER BY created_at, id`, params: after() },
    { sql: `DELETE FROM ${table} WHERE id > $1::BIGINT`, params: after() },
    { sql: `INSERT INTO ${table} SELECT * FROM reordered`, params: new BoundParams() },
    { sql: 'DROP TABLE reordered', params: new BoundParams() },
  ];
}

/** Deletes the rows after id `afterId` from every table of the index: an import's rows taken before a commit that did not come. */
export function deleteAfterStatements(table: string, columns: FilterColumn[], afterId: number): DuckDbQuery[] {
  const tables = [
    { name: table, id: 'id' },
    ...columns.filter((column) => column.storage).map(({ storage }) => ({ name: storage!.table, id: storage!.parentColumn })),
  ];
  return tables.map(({ name, id }) => ({ sql: `DELETE FROM ${name} WHERE ${id} > $1::BIGINT`, params: new BoundParams(afterId) }));
}

/** The index's column of the hashes of a hashed column's values. */
export function hashedColumn(name: string): string {
  return `${name}_hash`;
}

/** The temporary table each batch of source rows is appended to before indexingStatements index it, in one transaction. */
export const INCOMING_TABLE = 'incoming';
// The temporary table each batch's documents are parsed into, once, for every table of the index to read.
const PARSED_TABLE = 'parsed';

// The type json_transform reads each kind of column from the document as.
const JSON_TYPE: Record<Exclude<FilterColumn['type'], 'timestamp'>, unknown> = {
  integer: 'BIGINT',
  boolean: 'BOOLEAN',
  number: 'DOUBLE',
  string: 'VARCHAR',
  stringArray: ['VARCHAR'],
};

/**
 * The temporary tables of a batch of source rows: INCOMING_TABLE, appended to (id, account_id,
 * the row columns, the document), and PARSED_TABLE, the same rows with their documents read (parsedRows).
 */
export function incomingTableStatements(columns: FilterColumn[], hashed: string[], source: SourceLayout): string[] {
  const rowColumns = source.rowColumns.map((name) => `${name} ${duckDbType(columnNamed(columns, name).type)}`);
  return [
    `CREATE OR REPLACE TEMP TABLE ${INCOMING_TABLE} (id BIGINT NOT NULL, account_id BIGINT NOT NULL, ${[...rowColumns, 'document VARCHAR NOT NULL'].join(', ')})`,
    // Typed as json_transform answers.
    `CREATE OR REPLACE TEMP TABLE ${PARSED_TABLE} AS ${parsedRows(columns, hashed, source)} LIMIT 0`,
  ];
}

/**
 * The rows of INCOMING_TABLE with their documents parsed by DuckDB's JSON reader into `d`: every
 * column the index holds that is not among the row columns, hashed ones as text.
 */
function parsedRows(columns: FilterColumn[], hashed: string[], source: SourceLayout): string {
  const structure: Record<string, unknown> = {};
  for (const column of columns.filter((column) => !source.rowColumns.includes(column.name))) {
    if (column.type === 'timestamp') throw new Error(`${column.name}: a timestamp is read from the source row, not from its document`);
    structure[column.name] = JSON_TYPE[column.type];
  }
  for (const name of hashed) structure[name] = 'VARCHAR';
  return `SELECT ${['id', 'account_id', ...source.rowColumns].join(', ')}, ${jsonTransform(structure)} AS d FROM ${INCOMING_TABLE}`;
}

/**
 * The statements that move the rows appended to INCOMING_TABLE into the index and empty it: each
 * document parsed once by DuckDB's JSON reader (parsing it again for each table of the index took
 * longer than keeping the values), e-mail addresses hashed (the first 8 bytes of their SHA-256,
 * the same in every version), and each array's distinct elements into its own table. They name
 * no table of their own making, so that the index prepares them once: planning them again for
 * every catch-up took longer than a few rows' work.
 */
export function indexingStatements(table: string, columns: FilterColumn[], hashed: string[], source: SourceLayout): string[] {
  const scalarColumns = columns.filter((column) => !column.storage);
  const values = scalarColumns.map((column) =>
    source.rowColumns.includes(column.name) ? column.name : column.type === 'boolean' ? `d.${column.name}::TINYINT` : `d.${column.name}`,
  );
  const ranked = columns.filter(isRanked);
  const names = [...scalarColumns.map((column) => column.name), ...ranked.map((column) => rankedColumn(column.name)), ...hashed.map(hashedColumn)];
  const ranks = ranked.map((column) => rankSql(`d.${column.name}`));
  const hashes = hashed.map((name) => `('0x' || left(sha256(d.${name}), 16))::UBIGINT`);
  const statements = [
    `INSERT INTO ${PARSED_TABLE} ${parsedRows(columns, hashed, source)}`,
    `INSERT INTO ${table} (id, account_id, ${names.join(', ')}) SELECT id, account_id, ${[...values, ...ranks, ...hashes].join(', ')} FROM ${PARSED_TABLE}`,
  ];
  for (const { name, storage } of columns.filter((column) => column.storage)) {
    const { table: elements, parentColumn, valueColumn } = storage!;
    // list_distinct, not SELECT DISTINCT: DuckDB 1.5 ran a prepared SELECT DISTINCT over unnest
    // inside a transaction with wrong ids and accounts in its rows.
    statements.push(
      `INSERT INTO ${elements} (${parentColumn}, account_id, ${valueColumn}) SELECT id, account_id, unnest(list_distinct(d.${name})) FROM ${PARSED_TABLE}`,
    );
  }
  statements.push(`DELETE FROM ${PARSED_TABLE}`, `DELETE FROM ${INCOMING_TABLE}`);
  return statements;
}

/** The values named in `structure` of the JSON `text` (a row's document), each read as the type given there. */
function jsonTransform(structure: Record<string, unknown>, text = 'document'): string {
  return `json_transform(${text}, '${JSON.stringify(structure).replaceAll("'", "''")}')`;
}

function columnNamed(columns: FilterColumn[], name: string): FilterColumn {
  const column = columns.find((candidate) => candidate.name === name);
  if (!column) throw new Error(`the index has no column ${name}`);
  return column;
}

// The account's rows matching the filters: the account is always $1, bound first by every question.
function matching(filters: Filter[], params: BoundParams): string {
  return `account_id = $1::BIGINT AND ${filtersToDuckDb(filters, params, '$1::BIGINT')}`;
}

/** The number of the account's rows matching `filters` with ids above `above`, up to `upTo`. */
export function countQuery(table: string, accountId: number, filters: Filter[], above: number, upTo: number): DuckDbQuery {
  const params = new BoundParams(accountId, above, upTo);
  return { sql: `SELECT count(*) FROM ${table} WHERE id > $2::BIGINT AND id <= $3::BIGINT AND ${matching(filters, params)}`, params };
}

/**
 * The count and pages 1 to `page` in one scan: min(id, n) keeps the n smallest matching ids, so
 * the answer is one aggregate, with no sort of the matching rows.
 */
export function countAndPagesQuery(table: string, accountId: number, filters: Filter[], upTo: number, page: number): DuckDbQuery {
  const params = new BoundParams(accountId, upTo);
  return {
    sql: `SELECT count(*), min(id, ${page * PAGE_SIZE}) FROM ${table} WHERE id <= $2::BIGINT AND ${matching(filters, params)}`,
    params,
  };
}

/**
 * The ids of page `page`, up to `upTo`: after `afterId` (the last id of the page before) when it
 * is known, else by offset.
 */
export function pageQuery(table: string, accountId: number, filters: Filter[], upTo: number, page: number, afterId: number | undefined): DuckDbQuery {
  // The id after which to read is bound, as every value is, so that pages of one kind share one statement (kept prepared).
  const params = afterId !== undefined ? new BoundParams(accountId, upTo, afterId) : new BoundParams(accountId, upTo);
  const after = afterId !== undefined ? ' AND id > $3::BIGINT' : '';
  const offset = afterId !== undefined ? '' : ` OFFSET ${(page - 1) * PAGE_SIZE}`;
  return {
    sql: `SELECT id FROM ${table} WHERE id <= $2::BIGINT${after} AND ${matching(filters, params)} ORDER BY id LIMIT ${PAGE_SIZE}${offset}`,
    params,
  };
}

/** Up to `limit` ids of the account's rows matching `filters` after `afterId`, up to `upTo`, in ascending order: an export's next batch. */
export function idsAfterQuery(table: string, accountId: number, filters: Filter[], upTo: number, afterId: number, limit: number): DuckDbQuery {
  const params = new BoundParams(accountId, upTo, afterId);
  return {
    sql: `SELECT id FROM ${table} WHERE id <= $2::BIGINT AND id > $3::BIGINT AND ${matching(filters, params)} ORDER BY id LIMIT ${limit}`,
    params,
  };
}

// A summary's time bucket (bucketSql) is a whole number: local seconds counted from 0000-12-28, a Thursday four
// days before year 1 and a whole number of weeks before 1970-01-01, divided by the bucket's
// length. Counted from before year 1, the division (which DuckDB rounds toward zero) rounds
// down for every time a conversion can have; counted from a Thursday, a counted day falls on
// the weekday of the day it counts. Whole numbers group faster than truncated timestamps.
const DAYS_BEFORE_1970 = 719_166;
const SECONDS_BEFORE_1970 = DAYS_BEFORE_1970 * 86_400;
// The windows of time a summary finds offsets over are counted from before year 1 too.
const WINDOWS_BEFORE_1970 = Math.ceil(SECONDS_BEFORE_1970 / WINDOW_SECONDS);

/**
 * The windows of time (whole WINDOW_SECONDS since 1970) that the account's rows with ids above
 * `above`, up to `upTo`, lie in: where a summary's time zone is looked at, extended as rows arrive.
 */
export function createdAtWindowsQuery(table: string, accountId: number, above: number, upTo: number): DuckDbQuery {
  const params = new BoundParams(accountId, above, upTo);
  return {
    sql: `SELECT DISTINCT (created_at + ${WINDOWS_BEFORE_1970 * WINDOW_SECONDS}) // ${WINDOW_SECONDS} - ${WINDOWS_BEFORE_1970} FROM ${table} WHERE account_id = $1::BIGINT AND id > $2::BIGINT AND id <= $3::BIGINT`,
    params,
  };
}

/** Whether any of the account's rows with ids above `above`, up to `upTo`, holds money that is not whole cents (money.ts): one row or none. */
export function notWholeCentsQuery(table: string, accountId: number, above: number, upTo: number): DuckDbQuery {
  const params = new BoundParams(accountId, above, upTo);
  const odd = MONEY.map((column) => `${rankedColumn(column)} & 1 = 1`).join(' OR ');
  return { sql: `SELECT 1 FROM ${table} WHERE account_id = $1::BIGINT AND id > $2::BIGINT AND id <= $3::BIGINT AND (${odd}) LIMIT 1`, params };
}

/** Whether a row beyond the watermark holds money that is not whole cents, as its ranks would say. */
export function notWholeCentsBeyond(row: UnindexedRow): boolean {
  return MONEY.some((column) => {
    const value = row.values[column];
    return typeof value === 'number' && rankOf(value) === undefined;
  });
}

/** What a summary groups by: a time bucket, or a column of the index (an array column groups by each element). */
export type GroupKey = { bucket: TimeBucket } | { column: FilterColumn };

/** Local time over a span: a time zone's offsets from UTC, and the span [from, to) (epoch seconds) that the rows a summary reads lie in. */
export interface LocalTime {
  offsets: OffsetSpan[];
  from: number;
  to: number;
}

// How a bucket's start is written: the local date, or date and hour.
const BUCKET_FORMAT: Record<TimeBucket, string> = { hour: '%Y-%m-%dT%H:00', day: '%Y-%m-%d', week: '%Y-%m-%d', month: '%Y-%m-%d' };

// A month is found by its day in a table of the days the rows lie in, which is faster than
// working it out row by row, up to this many days; a wider span (a conversion dated centuries
// off) made the table cost more than it saved.
const MONTH_TABLE_DAYS = 20_000;

interface BucketSql {
  /** The row's bucket, a whole number that rises with time. */
  key: string;
  /** The epoch seconds of the local start of bucket `k`, as if local time were UTC. */
  start: (k: string) => string;
  /** A table the rows are joined to for their key: its definition and the join. */
  table?: { sql: string; join: string };
}

/** How rows are put in buckets of local time, and how a bucket's start is known again. */
function bucketSql(bucket: TimeBucket, { offsets, from, to }: LocalTime): BucketSql {
  // Whole numbers, so that // divides whole: created_at and the offsets written in are seconds.
  const seconds = `(c.created_at + ${offsetOf(offsets)} + ${SECONDS_BEFORE_1970})`;
  const localDay = `${seconds} // 86400`;
  const dayStart = (k: string) => `(${k} - ${DAYS_BEFORE_1970}) * 86400`;
  if (bucket === 'hour') return { key: `${seconds} // 3600`, start: (k) => `${k} * 3600 - ${SECONDS_BEFORE_1970}` };
  if (bucket === 'day') return { key: localDay, start: dayStart };
  // Weeks begin on Monday: day 0 is a Thursday, so day + 3 is a multiple of 7 on Mondays.
  if (bucket === 'week') return { key: `(${localDay} + 3) // 7`, start: (k) => dayStart(`(${k} * 7 - 3)`) };
  // A month's key is the counted day of its first day.
  const firstOfMonth = (day: string) => `${day} - dayofmonth(DATE '1970-01-01' + (${day} - ${DAYS_BEFORE_1970})::INTEGER) + 1`;
  // Local days are within a day of the span's, whatever the offset.
  const [first, last] = [Math.floor((from + SECONDS_BEFORE_1970) / 86_400) - 1, Math.floor((to + SECONDS_BEFORE_1970) / 86_400) + 1];
  if (last - first > MONTH_TABLE_DAYS) return { key: firstOfMonth(`(${localDay})`), start: dayStart };
  return {
    key: 'months.month',
    start: dayStart,
    table: {
      sql: `months AS (SELECT day, ${firstOfMonth('day')} AS month FROM range(${first}, ${last}) t(day))`,
      join: `JOIN months ON months.day = ${localDay}`,
    },
  };
}

// The money columns a summary sums.
const MONEY = ['amount', 'tax_amount', 'shipping_amount'] as const;

/**
 * What a summary sums over the conversions of one group or of all, each named: the
 * conversions, the amounts there are, each money column's ranks summed and, `withFix`, its
 * values that are not whole cents summed apart (money.ts), and last the buyers: distinct e-mail
 * addresses, told apart by hash. summaryMeasures makes the answer's measures of them. The
 * columns these read are those summedColumns gives the rows beyond the watermark.
 */
function measureParts(withFix: boolean): { name: string; sql: string }[] {
  return [
    { name: 'conversions', sql: 'count(*)' },
    // The rank is null where the amount is: one column read instead of two.
    { name: 'amounts', sql: 'count(c.amount_rank)' },
    ...MONEY.map((column) => ({ name: `${column}_ranks`, sql: `sum(c.${rankedColumn(column)})` })),
    ...(withFix ? MONEY.map((column) => ({ name: `${column}_fix`, sql: moneyFixSql(column) })) : []),
    { name: 'buyers', sql: `count(DISTINCT c.${hashedColumn('email')})` },
  ];
}
// The parts' names, without and with the fix.
const PARTS = [false, true].map((withFix) => measureParts(withFix).map(({ name }) => name));
const partsOf = (withFix: boolean) => PARTS[Number(withFix)]!;
// The totals but the buyers, made of every group's parts (before the LIMIT) and written on each group.
const totalsOverGroups = (withFix: boolean) =>
  partsOf(withFix)
    .slice(0, -1)
    .map((name) => `sum(${name}) OVER ()`);

/** A summary's rows as summaryQueries' statements give them: each group's keys, then the parts of its sums (measureParts), and the totals' parts. */
export interface SummaryParts {
  groups: (string | number | null)[][];
  totals: (string | number | null)[];
}

/**
 * A summary's rows of parts (`keys` keys before each group's; `withFix` as they were asked) as
 * the answer's measures: conversions, amount, tax_amount, shipping_amount (each rounded to
 * cents), average_amount (null without amounts) and buyers.
 */
export function summaryMeasures({ groups, totals }: SummaryParts, keys: number, withFix: boolean): SummaryRows {
  const names = partsOf(withFix);
  const measures = (parts: (string | number | null)[]): (number | null)[] => {
    const part = (name: string) => parts[names.indexOf(name)];
    const twice = MONEY.map((column) => twiceMillionths(part(`${column}_ranks`), part(`${column}_fix`)));
    const amounts = BigInt(part('amounts') ?? 0);
    const average = amounts === 0n ? null : centsOf(twice[0]!, amounts);
    return [Number(part('conversions')), ...twice.map((sum) => centsOf(sum)), average, Number(part('buyers'))];
  };
  return { groups: groups.map((row) => [...row.slice(0, keys), ...measures(row.slice(keys))]), totals: measures(totals) };
}

/**
 * A summary of the account's rows matching `filters`, up to `upTo`, and of `beyond`, rows above
 * `upTo` that the index does not hold yet and that match the filters (unindexed-rows.ts), given
 * as one JSON text of their values: `groups` (keys first, then the measures, in key order, at most
 * MAX_SUMMARY_GROUPS + 1) and `totals` (each row counted once, even when an array key puts it in
 * several groups). Time buckets are of `created_at` in local time, UTC plus `localTime`'s offsets
 * (time-zones.ts), which must span `beyond`'s times too: a day is the seller's day.
 *
 * Both hold the parts of their sums (measureParts; summaryMeasures makes the answer of them),
 * `withFix` those that sum money values that are not whole cents exactly. Where each row is in
 * one group only (keys, and no array among them), each group also carries the totals' parts but
 * the buyers (totalsOverGroups) and `totals` counts only the buyers, the one measure the groups
 * cannot add up to (totalsFromGroups puts them together): the matching rows are summed once
 * instead of twice.
 */
export function summaryQueries(
  table: string,
  accountId: number,
  filters: Filter[],
  upTo: number,
  groupBy: GroupKey[],
  localTime: LocalTime,
  beyond: UnindexedRow[] = [],
  withFix = false,
): { groups: DuckDbQuery; totals: DuckDbQuery; totalsInGroups: boolean } {
  // The rows beyond, made into their lists' text once for both statements.
  const columns = summedColumns(groupBy);
  const names = columns.map(({ name }) => name);
  const beyondText = beyond.length === 0 ? '' : JSON.stringify(Object.fromEntries(columns.map(({ name }) => [name, beyond.map(valueBeyond(name))])));
  const structure = Object.fromEntries(columns.map(({ name, type }) => [name, [type] as [string]]));
  const matched = (params: BoundParams) => {
    const indexed = `FROM ${table} WHERE id <= $2::BIGINT AND ${matching(filters, params)}`;
    if (beyond.length === 0) return `WITH c AS (SELECT * ${indexed})`;
    const ranks = MONEY.map(rankedColumn);
    const unnested = `SELECT ${names.map((name) => `unnest(b.${name}) AS ${name}`).join(', ')} FROM (SELECT ${listsOf(params, beyondText, structure)} AS b)`;
    // Ranked as the index ranks its own rows.
    const ranked = `SELECT *, ${MONEY.map((column) => `${rankSql(column)} AS ${rankedColumn(column)}`).join(', ')} FROM (${unnested})`;
    return `WITH c AS (SELECT ${[...names, ...ranks].join(', ')} ${indexed} UNION ALL ${ranked})`;
  };
  const parts = measureParts(withFix);
  const measures = parts.map(({ name, sql }) => `${sql} AS ${name}`).join(', ');
  const totalsInGroups = groupBy.length > 0 && groupBy.every((key) => 'bucket' in key || !key.column.storage);
  const totalsParams = new BoundParams(accountId, upTo);
  const totalsMeasures = totalsInGroups ? parts.find(({ name }) => name === 'buyers')!.sql : measures;
  const totals = { sql: `${matched(totalsParams)} SELECT ${totalsMeasures} FROM c`, params: totalsParams };

  const params = new BoundParams(accountId, upTo);
  const joins: string[] = [];
  const tables: string[] = [];
  // Grouped by the bucket's number, written as text once per group, not per row.
  const keys = groupBy.map((key, index) => {
    if ('bucket' in key) {
      const bucket = bucketSql(key.bucket, localTime);
      if (bucket.table) {
        tables.push(`, ${bucket.table.sql}`);
        joins.push(bucket.table.join);
      }
      return { sql: bucket.key, written: (k: string) => `strftime(make_timestamp((${bucket.start(k)}) * 1000000), '${BUCKET_FORMAT[key.bucket]}')` };
    }
    const { column } = key;
    if (!column.storage) return { sql: `c.${column.name}`, written: undefined };
    // Each element is a group; a row without elements is in the group of none (null).
    const { parentColumn, valueColumn } = column.storage;
    joins.push(`LEFT JOIN ${elementsOf(column, params, beyond)} e${index} ON e${index}.${parentColumn} = c.id`);
    return { sql: `e${index}.${valueColumn}`, written: undefined };
  });
  const grouped = `SELECT ${keys.map((key, index) => `${key.sql} AS k${index}`).join(', ')}, ${measures} FROM c${joins.map((join) => ` ${join}`).join('')} GROUP BY ALL`;
  const written = keys.map((key, index) => key.written?.(`k${index}`) ?? `k${index}`);
  const excluded = keys.map((_, index) => `k${index}`);
  const totalsOnGroups = totalsInGroups ? `, ${totalsOverGroups(withFix).join(', ')}` : '';
  const sql = `${matched(params)}${tables.join('')}, g AS (${grouped}) SELECT ${written.join(', ')}, * EXCLUDE (${excluded.join(', ')})${totalsOnGroups} FROM g ORDER BY ${keys.map((_, index) => `k${index} NULLS LAST`).join(', ')} LIMIT ${MAX_SUMMARY_GROUPS + 1}`;
  return { groups: { sql, params }, totals, totalsInGroups };
}

/**
 * The columns a summary reads of each row (its measures, its time and its keys), each with its
 * type in the index: what the rows beyond the index's watermark are given as, beside its own.
 */
function summedColumns(groupBy: GroupKey[]): { name: string; type: string }[] {
  const columns = [
    { name: 'id', type: 'BIGINT' },
    { name: 'created_at', type: 'BIGINT' },
    { name: 'amount', type: 'DOUBLE' },
    { name: 'tax_amount', type: 'DOUBLE' },
    { name: 'shipping_amount', type: 'DOUBLE' },
    { name: hashedColumn('email'), type: 'UBIGINT' },
  ];
  for (const key of groupBy) {
    if ('column' in key && !key.column.storage && !columns.some(({ name }) => name === key.column.name)) {
      columns.push({ name: key.column.name, type: duckDbType(key.column.type) });
    }
  }
  return columns;
}

/** How a summed column's value is read from a row beyond the watermark: its hash for a hashed column, as text (JSON's numbers stop at 2^53). */
function valueBeyond(name: string): (row: UnindexedRow) => number | string | null {
  if (name === 'id') return (row) => row.id;
  if (name === hashedColumn('email')) return (row) => row.hashes.email?.toString() ?? null;
  return (row) => row.values[name] as number | string | null;
}

/** An array column's elements table for a summary's join: the index's up to its watermark ($2), and those of the rows beyond it. */
function elementsOf(column: FilterColumn, params: BoundParams, beyond: UnindexedRow[]): string {
  const { table, parentColumn, valueColumn } = column.storage!;
  if (beyond.length === 0) return table;
  const pairs = beyond.flatMap((row) => [...new Set(row.values[column.name] as string[] | null)].map((element) => [row.id, element] as const));
  const lists = JSON.stringify({ ids: pairs.map(([id]) => id), elements: pairs.map(([, element]) => element) });
  const elements = listsOf(params, lists, { ids: ['BIGINT'], elements: ['VARCHAR'] });
  return `(SELECT ${parentColumn}, ${valueColumn} FROM ${table} WHERE ${parentColumn} <= $2::BIGINT UNION ALL SELECT unnest(e.ids), unnest(e.elements) FROM (SELECT ${elements} AS e))`;
}

/**
 * Lists of values, bound as one JSON text (an object of a list a name) and read back by DuckDB as
 * a struct of typed lists (`structure`, a list type a name): one parameter of text binds and
 * plans faster than a list parameter a column, whose every value is bound on its own.
 */
function listsOf(params: BoundParams, listsText: string, structure: Record<string, [string]>): string {
  params.bind(listsText);
  return jsonTransform(structure, `$${params.values.length}::VARCHAR`);
}

/** The rows of a summary's groups that end with the totals over them (summaryQueries, `withFix` as asked), as groups and totals, with `buyers` counted apart. */
export function totalsFromGroups(rows: SummaryParts['groups'], buyers: number, withFix: boolean): SummaryParts {
  const width = partsOf(withFix).length - 1;
  // When nothing matches: the parts of no rows, counts 0 and sums null.
  const totals =
    rows[0]?.slice(-width) ??
    partsOf(withFix)
      .slice(0, -1)
      .map((name) => (name === 'conversions' || name === 'amounts' ? 0 : null));
  return { groups: rows.map((row) => row.slice(0, -width)), totals: [...totals, buyers] };
}

/** The offset to add to `c.created_at` for local time: one number, or a CASE over the changes (numbers computed, never text asked). */
function offsetOf(offsets: OffsetSpan[]): string {
  if (offsets.length <= 1) return String(offsets[0]?.offsetSeconds ?? 0);
  const changes = offsets.slice(1).map((span, index) => `WHEN c.created_at < ${span.from} THEN ${offsets[index]!.offsetSeconds}`);
  return `CASE ${changes.join(' ')} ELSE ${offsets.at(-1)!.offsetSeconds} END`;
}
