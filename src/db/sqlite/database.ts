import fs from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteAdapter, type SqliteDatabase, SqliteDriver, SqliteIntrospector, SqliteQueryCompiler, sql } from 'kysely';
import type { Database, EngineSql, JsonField } from '../adapter.js';
import type { DatabaseSchema } from '../schema.js';
import { CONVERSIONS_SCHEMA, cachingPrepare, openConnection, sqliteFiles } from './connection.js';
import { SqliteWorkerDriver, StatementTimeoutError } from './driver.js';

// Page cache of each SQLite connection (the default is 2 MiB): a page of conversions read by id touches some hundred pages.
const SQLITE_CACHE_KIB = 8 * 1024;

// The command line's one connection: an import's transaction of a million rows keeps more of the
// unique index of conversions at hand (docs/performance.md).
const COMMAND_LINE_CACHE_KIB = 64 * 1024;

// Reads of keys, accounts, assets and pages of conversions by id are short: two threads serve them.
const SQLITE_READERS = 2;

/** Texts as BLOBs, their UTF-8 bytes as they are stored, pages of them joined, and rows there already skipped by INSERT OR IGNORE (Database.textAsBytes, joinsTextPages, skipExisting). */
export const sqliteSql: EngineSql = {
  textAsBytes: (text) => sql<Uint8Array>`CAST(${text} AS BLOB)`,
  joinsTextPages: true,
  skipExisting: (insert) => insert.orIgnore(),
};

/**
 * The embedded default: SQLite files in DATA_DIR, every statement on a worker thread; or, for
 * the command line (DatabaseOptions.commandLine), on the calling thread.
 */
export function openSqlite(dataDir: string, statementTimeoutMs: number | undefined, commandLine = false): Database {
  fs.mkdirSync(dataDir, { recursive: true });
  const driver = commandLine
    ? new SqliteDriver({ database: inThread(openConnection({ dataDir, readonly: false, cacheKiB: COMMAND_LINE_CACHE_KIB })) })
    : new SqliteWorkerDriver({ dataDir, statementTimeoutMs, cacheKiB: SQLITE_CACHE_KIB, readers: SQLITE_READERS });
  const db = new Kysely<DatabaseSchema>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
  return {
    db,
    conversionSource: { engine: 'sqlite', file: sqliteFiles(dataDir).conversions },
    serializeConversionWrites: async () => {},
    engine: 'sqlite',
    columnTypes: {
      autoId: (column) => column.primaryKey().autoIncrement(),
      autoIdType: 'integer',
      text: sql`text`,
    },
    conversionsSchema: CONVERSIONS_SCHEMA,
    isUniqueViolation: (error) =>
      (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE' || (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
    isBusy: (error) => (error as { code?: string })?.code === 'SQLITE_BUSY',
    isStatementTimeout: (error) => error instanceof StatementTimeoutError,
    idCounters: async (executor = db) => {
      const counters: Record<string, number> = {};
      for (const schema of ['main', CONVERSIONS_SCHEMA]) {
        const { rows } = await sql<{ name: string; seq: number }>`select name, seq from ${sql.raw(`${schema}.sqlite_sequence`)}`.execute(executor);
        for (const { name, seq } of rows) counters[name] = Number(seq);
      }
      return counters;
    },
    // AUTOINCREMENT moves past the ids inserted by itself; only the counters of another database need setting.
    resetSequences: async (executor = db, handedOut = {}) => {
      for (const [table, seq] of Object.entries(handedOut)) {
        for (const schema of ['main', CONVERSIONS_SCHEMA]) {
          const counters = sql.raw(`${schema}.sqlite_sequence`);
          const { rows } = await sql`select 1 from ${sql.raw(`${schema}.sqlite_master`)} where type = 'table' and name = ${table}`.execute(executor);
          if (rows.length === 0) continue;
          await sql`update ${counters} set seq = ${seq} where name = ${table} and seq < ${seq}`.execute(executor);
          await sql`insert into ${counters} (name, seq) select ${table}, ${seq} where not exists (select 1 from ${counters} where name = ${table})`.execute(
            executor,
          );
        }
      }
    },
    refreshStatistics: async (executor = db) => {
      // Approximate statistics, from at most this many rows an index: enough for the planner to
      // choose well, and fast at any size.
      await sql`pragma analysis_limit = 1000`.execute(executor);
      await sql`analyze`.execute(executor);
    },
    separateConversions: (executor) => moveToConversionsFile(executor, ['conversions', 'conversion_tracking_codes']),
    dropConversionColumns: (executor, columns) => dropColumns(executor, CONVERSIONS_SCHEMA, 'conversions', columns),
    jsonObject: (table, fields) => {
      const value = (field: JsonField) => {
        const column = sql.ref(`${table}.${field.name}`);
        switch (field.kind) {
          case 'plain':
            return column;
          case 'number': // a REAL with an integral value prints as 49.0; JavaScript writes 49
            return sql`iif(${column} = cast(${column} as integer), cast(${column} as integer), ${column})`;
          case 'boolean':
            return sql`case ${column} when 1 then json('true') when 0 then json('false') end`;
          case 'timestamp':
            return sql`strftime('%Y-%m-%dT%H:%M:%SZ', ${column}, 'unixepoch')`;
          case 'json':
            return sql`json(${column})`;
        }
      };
      return sql<string>`json_object(${sql.join(fields.map((field) => sql`${sql.lit(field.name)}, ${value(field)}`))})`;
    },
    ...sqliteSql,
    poolStats: () => undefined,
    close: async () => {
      // The driver's threads started with it, whether or not Kysely ever used it.
      await db.destroy();
      await driver.destroy();
    },
  };
}

/** The connection as Kysely's SqliteDriver uses it, with the worker's statement cache. */
function inThread(connection: BetterSqlite3.Database): SqliteDatabase {
  return { close: () => connection.close(), prepare: cachingPrepare(connection) };
}

/** SQLite creates an index whose name is not qualified in the main file, whatever its table's. */
function inSchema(createStatement: string, schema: string): string {
  return createStatement.replace(/^(CREATE (?:UNIQUE )?INDEX (?:IF NOT EXISTS )?)/i, `$1${schema}.`);
}

/**
 * Moves tables with their rows, ids, indexes and auto-increment counters from the main file into
 * the conversions file, in one transaction. A table already moved is left alone; one found in
 * both files (a stop between the two files' commits) is copied again from the main file.
 */
async function moveToConversionsFile(db: Kysely<any>, tables: string[]): Promise<void> {
  const target = CONVERSIONS_SCHEMA;
  await db.transaction().execute(async (trx) => {
    const definitions = new Map<string, string>();
    for (const table of tables) {
      const { rows } = await sql<{ sql: string }>`select sql from main.sqlite_master where type = 'table' and name = ${table}`.execute(trx);
      if (rows[0]) definitions.set(table, rows[0].sql);
    }
    // Children first: the tracking codes refer to the conversions.
    for (const table of [...definitions.keys()].reverse()) await sql`drop table if exists ${sql.raw(target)}.${sql.id(table)}`.execute(trx);
    for (const [table, createTable] of definitions) {
      // A foreign key cannot name a table of another file: the accounts it named stay in main.
      const definition = createTable
        .replace(/^CREATE TABLE ("?\w+"?)/i, `CREATE TABLE ${target}.$1`)
        .replace(/\s+references\s+"?accounts"?\s*\("?id"?\)(\s+on delete cascade)?/gi, '');
      await sql.raw(definition).execute(trx);
      await sql`insert into ${sql.raw(target)}.${sql.id(table)} select * from main.${sql.id(table)}`.execute(trx);
      const indexes = await sql<{ sql: string }>`select sql from main.sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`.execute(
        trx,
      );
      for (const index of indexes.rows) await sql.raw(inSchema(index.sql, target)).execute(trx);
    }
    // Ids are never reused: the counters move with their tables (inserting the rows set them only to the largest id).
    for (const table of definitions.keys()) {
      await sql`delete from ${sql.raw(target)}.sqlite_sequence where name = ${table}`.execute(trx);
      await sql`insert into ${sql.raw(target)}.sqlite_sequence select name, seq from main.sqlite_sequence where name = ${table}`.execute(trx);
    }
    for (const table of [...definitions.keys()].reverse()) await sql`drop table main.${sql.id(table)}`.execute(trx);
  });
}

/**
 * Drops columns of a table by copying it once without them (SQLite's ALTER TABLE DROP COLUMN
 * rewrites the whole table for each column), in one transaction: its rows with their ids, its
 * other constraints, its indexes and its auto-increment counter stay. The space the old copy
 * took is given back to the file system afterwards.
 */
async function dropColumns(db: Kysely<any>, schema: string, table: string, columns: readonly string[]): Promise<void> {
  const copy = `${table}_narrowed`;
  await db.transaction().execute(async (trx) => {
    const master = sql.raw(`${schema}.sqlite_master`);
    const { rows } = await sql<{ sql: string }>`select sql from ${master} where type = 'table' and name = ${table}`.execute(trx);
    const definition = rows[0]!.sql;
    const body = definition.slice(definition.indexOf('(') + 1, definition.lastIndexOf(')'));
    // The parts of the definition (columns, constraints) that name none of the columns, quoted as Kysely writes every name.
    const kept = topLevelParts(body).filter((part) => !columns.some((column) => part.includes(`"${column}"`)));
    const keptColumns = (await sql<{ name: string }>`select name from pragma_table_info(${table}, ${schema})`.execute(trx)).rows
      .map(({ name }) => name)
      .filter((name) => !columns.includes(name));
    const indexes = await sql<{ sql: string }>`select sql from ${master} where type = 'index' and tbl_name = ${table} and sql is not null`.execute(trx);
    const sequence = await sql<{ seq: number }>`select seq from ${sql.raw(`${schema}.sqlite_sequence`)} where name = ${table}`.execute(trx);

    const list = keptColumns.map((name) => `"${name}"`).join(', ');
    await sql.raw(`CREATE TABLE ${schema}."${copy}" (${kept.join(', ')})`).execute(trx);
    await sql.raw(`INSERT INTO ${schema}."${copy}" (${list}) SELECT ${list} FROM ${schema}."${table}" ORDER BY rowid`).execute(trx);
    await sql.raw(`DROP TABLE ${schema}."${table}"`).execute(trx);
    await sql.raw(`ALTER TABLE ${schema}."${copy}" RENAME TO "${table}"`).execute(trx);
    for (const index of indexes.rows) await sql.raw(inSchema(index.sql, schema)).execute(trx);
    // Ids are never reused: the counter stays where it was, not at the largest id copied.
    if (sequence.rows[0]) {
      await sql`update ${sql.raw(`${schema}.sqlite_sequence`)} set seq = ${sequence.rows[0].seq} where name = ${table}`.execute(trx);
    }
  });
  await sql.raw(`VACUUM ${schema}`).execute(db);
}

/** The comma-separated parts of a CREATE TABLE's list, commas inside parentheses and quotes left alone. */
function topLevelParts(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let index = 0; index < list.length; index++) {
    const character = list[index]!;
    if (quote) {
      if (character === quote) quote = undefined;
    } else if (character === '"' || character === "'") quote = character;
    else if (character === '(') depth++;
    else if (character === ')') depth--;
    else if (character === ',' && depth === 0) {
      parts.push(list.slice(start, index).trim());
      start = index + 1;
    }
  }
  parts.push(list.slice(start).trim());
  return parts;
}
