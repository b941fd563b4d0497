import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type ColumnDefinitionBuilder, type Expression, type RawBuilder, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import type { DatabaseSchema } from './schema.js';

/**
 * The one place that knows which database engine is behind Kysely. Everything else
 * (repositories, migrations, services) writes dialect-neutral Kysely code, and takes the
 * few column types that differ from `columnTypes`.
 */
export interface Database {
  db: Kysely<DatabaseSchema>;
  engine: 'sqlite' | 'postgres';
  columnTypes: ColumnTypes;
  /** Whether a failed statement broke a unique constraint. */
  isUniqueViolation(error: unknown): boolean;
  /**
   * Whether a write gave up waiting for another writer: SQLite has one at a time and waits 5 s
   * (an import holds it to its end); PostgreSQL writers wait on each other's rows only.
   */
  isBusy(error: unknown): boolean;
  /**
   * Moves every auto-increment counter past the largest id its table holds, so that rows copied
   * in with their ids (migrate-data) are not collided with by new ones. PostgreSQL's sequences do
   * not notice explicit ids; SQLite's AUTOINCREMENT does, so there it does nothing. `executor`
   * runs it inside a transaction.
   */
  resetSequences(executor?: Kysely<DatabaseSchema>): Promise<void>;
  /**
   * An expression building each row's JSON text from its columns, keys in the order given,
   * values written as the API writes them (see JsonField). Migration 0003 fills
   * conversions.entry_json with it.
   */
  jsonObject(table: string, fields: readonly JsonField[]): RawBuilder<string>;
  /**
   * A column reference that the planner will not answer through an index, for walking rows in
   * id order when a filter matches too many of them for its index to pay (see listRows).
   * SQLite takes the hint; PostgreSQL's planner decides from its statistics.
   */
  unindexed(ref: string): Expression<unknown>;
  /** Whether the planner follows `unindexed` (SQLite), or plans only from its statistics (PostgreSQL). */
  indexHints: boolean;
  /**
   * Readies `table` for a transaction that writes a great many rows into it, and returns what
   * to await before the commit. SQLite drops the table's secondary indexes and builds them
   * again at the end, once, from sorted rows, far cheaper than updating them row by row (the
   * indexes behind UNIQUE and PRIMARY KEY stay: the inserts check them). PostgreSQL keeps its
   * indexes, since dropping one would lock the table against every reader until the commit,
   * and analyzes the table at the end, so that its planner sees the new rows at once.
   */
  bulkLoad(executor: Kysely<DatabaseSchema>, table: string): Promise<() => Promise<void>>;
  /** Connections of the PostgreSQL pool, for metrics; undefined on SQLite's single connection. */
  poolStats(): { total: number; idle: number; waiting: number } | undefined;
  close(): Promise<void>;
}

/**
 * A column as the API writes it: `number` a double (49, not 49.0), `boolean` a 0/1 integer,
 * `timestamp` epoch seconds as RFC 3339 UTC text, `json` JSON text embedded as it is, and
 * `plain` text or an integer as stored.
 */
export interface JsonField {
  name: string;
  kind: 'plain' | 'number' | 'boolean' | 'timestamp' | 'json';
}

export interface ColumnTypes {
  /** An auto-incrementing integer primary key that never reuses a deleted row's id. */
  autoId(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  autoIdType: 'integer' | 'bigserial';
  /** Text that compares by code point (decisions §4). */
  text: RawBuilder<unknown>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
}

export function openDatabase(options: DatabaseOptions): Database {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize ?? 10) : openSqlite(options.dataDir);
}

export function sqliteFile(dataDir: string): string {
  return path.join(dataDir, 'acds.sqlite');
}

function openSqlite(dataDir: string): Database {
  fs.mkdirSync(dataDir, { recursive: true });
  const connection = new SQLite(sqliteFile(dataDir));
  // WAL lets the server read while the command line imports; FULL makes every commit durable.
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = FULL');
  connection.pragma('busy_timeout = 5000');
  connection.pragma('foreign_keys = ON');
  // 64 MiB of page cache (the default is 2 MiB): a list page reads some hundred pages.
  connection.pragma('cache_size = -65536');
  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: withStatementCache(connection) }) });
  return {
    db,
    engine: 'sqlite',
    columnTypes: {
      autoId: (column) => column.primaryKey().autoIncrement(),
      autoIdType: 'integer',
      text: sql`text`,
    },
    isUniqueViolation: (error) => (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE' || (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
    isBusy: (error) => (error as { code?: string })?.code === 'SQLITE_BUSY',
    resetSequences: async () => {},
    unindexed: (ref) => sql`+${sql.ref(ref)}`,
    indexHints: true,
    bulkLoad: async (executor, table) => {
      // Constraint indexes have no SQL of their own here.
      const { rows } = await sql<{ name: string; sql: string }>`
        select name, sql from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`.execute(executor);
      for (const { name } of rows) await sql`drop index ${sql.id(name)}`.execute(executor);
      return async () => {
        // The CREATE INDEX statements as SQLite itself stored them.
        for (const index of rows) await sql.raw(index.sql).execute(executor);
      };
    },
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
    poolStats: () => undefined,
    close: () => db.destroy(),
  };
}

const STATEMENT_CACHE_SIZE = 256;

/**
 * Keeps the most recently used prepared statements by their SQL: preparing a list page's
 * statement costs more than running it. Safe to reuse because Kysely runs one statement at a
 * time on the single connection.
 */
function withStatementCache(connection: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => connection.close(),
    prepare(text) {
      let statement = statements.get(text);
      if (statement) {
        statements.delete(text);
      } else {
        statement = connection.prepare(text);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      }
      statements.set(text, statement);
      return statement;
    },
  };
}

const INT8_OID = 20;

function openPostgres(connectionString: string, poolSize: number): Database {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // bigint ids and counts arrive as strings by default; all of ours fit in a double.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection that the server ends (a restart, a failover) is dropped from the pool and
  // replaced by the next query; without a listener its 'error' would stop the process.
  pool.on('error', (error) => console.error(`PostgreSQL closed an idle connection: ${error.message}`));
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    engine: 'postgres',
    columnTypes: {
      autoId: (column) => column.primaryKey(),
      autoIdType: 'bigserial',
      text: sql`text collate "C"`,
    },
    isUniqueViolation: (error) => (error as { code?: string })?.code === '23505',
    isBusy: () => false,
    resetSequences: async (executor = db) => {
      // Every column fed by a sequence (bigserial) in the schema in use, whatever the migrations made.
      const { rows } = await sql<{ table_name: string; column_name: string }>`
        select table_name, column_name from information_schema.columns
        where table_schema = current_schema() and column_default like 'nextval(%'`.execute(executor);
      for (const { table_name, column_name } of rows) {
        // is_called = false: the next value handed out is exactly max + 1 (1 on an empty table).
        await sql`select setval(
          pg_get_serial_sequence(quote_ident(current_schema()) || '.' || quote_ident(${table_name}), ${column_name}),
          coalesce((select max(${sql.ref(column_name)}) from ${sql.table(table_name)}), 0) + 1,
          false)`.execute(executor);
      }
    },
    jsonObject: (table, fields) => {
      const value = (field: JsonField) => {
        const column = sql.ref(`${table}.${field.name}`);
        switch (field.kind) {
          case 'plain':
          case 'number':
            return column;
          case 'boolean':
            return sql`(${column} = 1)`;
          case 'timestamp':
            return sql`to_char(to_timestamp(${column}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;
          case 'json':
            return sql`${column}::json`;
        }
      };
      // row_to_json writes compact JSON (json_build_object puts spaces around every colon); as
      // text, because the driver would otherwise parse it into objects.
      const columns = sql.join(fields.map((field) => sql`${value(field)} as ${sql.id(field.name)}`));
      return sql<string>`(select row_to_json(entry)::text from (select ${columns}) as entry)`;
    },
    // No hint: PostgreSQL's planner chooses from its statistics (see bulkLoad). Hiding a column
    // from it (coalesce(x, x)) also hides its statistics, and it then sorts a full scan.
    unindexed: (ref) => sql.ref(ref),
    indexHints: false,
    bulkLoad: async (executor, table) => async () => {
      await sql`analyze ${sql.table(table)}`.execute(executor);
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  };
}
