import fs from 'node:fs';
import { Kysely, PostgresDialect, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql, type ColumnDefinitionBuilder, type RawBuilder } from 'kysely';
import pg from 'pg';
import type { DatabaseSchema } from './schema.js';
import { CONVERSIONS_SCHEMA, sqliteFiles } from './sqlite/connection.js';
import { SqliteWorkerDriver, StatementTimeoutError } from './sqlite/driver.js';

/**
 * The one place that knows which database engine is behind Kysely. Everything else
 * (repositories, migrations, services) writes dialect-neutral Kysely code, and takes the
 * few column types that differ from `columnTypes`.
 */
export interface Database {
  db: Kysely<DatabaseSchema>;
  /**
   * Where the columnar index of conversions (src/db/columnar) reads new conversions from, on a
   * thread of its own: the SQLite conversions file, or the PostgreSQL server.
   */
  conversionSource: ConversionSourceAddress;
  /**
   * Makes transactions that insert conversions take turns, so that ids become visible in
   * ascending order and a reader that has seen id N has seen every id below it (the columnar
   * index catches up by id). SQLite has one writer at a time anyway; PostgreSQL takes an advisory
   * lock held to the transaction's end. Call it first in such a transaction.
   */
  serializeConversionWrites(trx: Kysely<DatabaseSchema>): Promise<void>;
  engine: 'sqlite' | 'postgres';
  columnTypes: ColumnTypes;
  /** Whether a failed statement broke a unique constraint. */
  isUniqueViolation(error: unknown): boolean;
  /**
   * Whether a write gave up waiting for another writer: SQLite has one at a time and waits 5 s
   * (an import holds it to its end); PostgreSQL writers wait on each other's rows only.
   */
  isBusy(error: unknown): boolean;
  /** Whether a statement was stopped for running past DatabaseOptions.statementTimeoutMs. */
  isStatementTimeout(error: unknown): boolean;
  /**
   * The schema holding the conversions tables where they are not in the default one: on SQLite
   * the conversions file (sqlite/connection.ts); undefined on PostgreSQL.
   */
  conversionsSchema: string | undefined;
  /** Moves the conversions tables into the conversions file (SQLite); does nothing on PostgreSQL. */
  separateConversions(executor: Kysely<any>): Promise<void>;
  /**
   * Gathers the statistics the planner chooses plans by, for every table: SQLite never gathers
   * them by itself, and plans asset filters and lookups blind without them. Run at start and
   * hourly (conversions are filtered in the columnar index, which needs none).
   */
  refreshStatistics(executor?: Kysely<any>): Promise<void>;
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
  /**
   * Statements running longer fail (isStatementTimeout) instead of holding a connection; undefined
   * sets no limit (the command line's imports and migrations). On SQLite the limit applies to
   * reads, the only statements a client can make long.
   */
  statementTimeoutMs?: number | undefined;
}

export type ConversionSourceAddress = { engine: 'sqlite'; file: string } | { engine: 'postgres'; url: string };

export function openDatabase(options: DatabaseOptions): Database {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize ?? 10, options.statementTimeoutMs)
    : openSqlite(options.dataDir, options.statementTimeoutMs);
}

/** The SQLite file that holds accounts, keys and assets (conversions have their own: sqliteFiles). */
export function sqliteFile(dataDir: string): string {
  return sqliteFiles(dataDir).main;
}

// Page cache of each SQLite connection (the default is 2 MiB): a page of conversions read by id touches some hundred pages.
const SQLITE_CACHE_KIB = 8 * 1024;

// Reads of keys, accounts, assets and pages of conversions by id are short: two threads serve them.
const SQLITE_READERS = 2;

function openSqlite(dataDir: string, statementTimeoutMs: number | undefined): Database {
  fs.mkdirSync(dataDir, { recursive: true });
  const driver = new SqliteWorkerDriver({ dataDir, statementTimeoutMs, cacheKiB: SQLITE_CACHE_KIB, readers: SQLITE_READERS });
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
    isUniqueViolation: (error) => (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE' || (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
    isBusy: (error) => (error as { code?: string })?.code === 'SQLITE_BUSY',
    isStatementTimeout: (error) => error instanceof StatementTimeoutError,
    resetSequences: async () => {},
    refreshStatistics: async (executor = db) => {
      // Approximate statistics, from at most this many rows an index: enough for the planner to
      // choose well, and fast at any size.
      await sql`pragma analysis_limit = 1000`.execute(executor);
      await sql`analyze`.execute(executor);
    },
    separateConversions: (executor) => moveToConversionsFile(executor, ['conversions', 'conversion_tracking_codes']),
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
    close: async () => {
      // The driver's threads started with it, whether or not Kysely ever used it.
      await db.destroy();
      await driver.destroy();
    },
  };
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
      const indexes = await sql<{ sql: string }>`select sql from main.sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`.execute(trx);
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

const INT8_OID = 20;
/** How values arrive from PostgreSQL: bigint ids and counts as numbers (strings by default); all of ours fit in a double. */
export const POSTGRES_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};
// The advisory lock that transactions inserting conversions take (serializeConversionWrites): "acds" in ASCII.
const CONVERSION_WRITES_LOCK = 0x61636473;
// The SQLSTATE of a statement cancelled, here by statement_timeout.
const QUERY_CANCELED = '57014';

function openPostgres(connectionString: string, poolSize: number, statementTimeoutMs: number | undefined): Database {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    ...(statementTimeoutMs === undefined ? {} : { statement_timeout: statementTimeoutMs }),
    types: POSTGRES_TYPES,
  });
  // An idle connection that the server ends (a restart, a failover) is dropped from the pool and
  // replaced by the next query; without a listener its 'error' would stop the process.
  pool.on('error', (error) => console.error(`PostgreSQL closed an idle connection: ${error.message}`));
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    conversionSource: { engine: 'postgres', url: connectionString },
    serializeConversionWrites: async (trx) => {
      await sql`select pg_advisory_xact_lock(${CONVERSION_WRITES_LOCK})`.execute(trx);
    },
    engine: 'postgres',
    columnTypes: {
      autoId: (column) => column.primaryKey(),
      autoIdType: 'bigserial',
      text: sql`text collate "C"`,
    },
    isUniqueViolation: (error) => (error as { code?: string })?.code === '23505',
    isBusy: () => false,
    isStatementTimeout: (error) => (error as { code?: string })?.code === QUERY_CANCELED,
    conversionsSchema: undefined,
    separateConversions: async () => {},
    refreshStatistics: async (executor = db) => {
      await sql`analyze`.execute(executor);
    },
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
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: async () => {
      await db.destroy();
    },
  };
}
