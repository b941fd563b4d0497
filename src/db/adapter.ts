import type { ColumnDefinitionBuilder, InsertQueryBuilder, Kysely, RawBuilder } from 'kysely';
import type { DatabaseSchema } from './schema.js';

/**
 * What the rest of the code knows of the database: dialect-neutral Kysely, and the few things
 * that differ by engine. Only the engines' own files (sqlite/database.ts, postgres/database.ts)
 * know which engine is behind it; repositories, migrations and services write Kysely code and
 * take the column types that differ from `columnTypes`.
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
   * Drops columns of the conversions table, keeping its rows, ids, indexes and id counter:
   * PostgreSQL in place; SQLite, whose ALTER TABLE would rewrite the table once per column, by
   * copying it once without them, in one transaction, and then giving back the space.
   */
  dropConversionColumns(executor: Kysely<any>, columns: readonly string[]): Promise<void>;
  /**
   * Gathers the statistics the planner chooses plans by, for every table: SQLite never gathers
   * them by itself, and plans asset filters and lookups blind without them. Run at start and
   * hourly (conversions are filtered in the columnar index, which needs none).
   */
  refreshStatistics(executor?: Kysely<any>): Promise<void>;
  /**
   * The largest id each table's auto-increment counter has handed out, by table: its largest
   * row's, or more where rows with larger ids were deleted (ids are never handed out again).
   */
  idCounters(executor?: Kysely<DatabaseSchema>): Promise<Record<string, number>>;
  /**
   * Moves every auto-increment counter past the largest id its table holds and past `handedOut`
   * (another database's idCounters), so that rows copied in with their ids (migrate-data) are not
   * collided with by new ones, nor a deleted row's id handed out again. PostgreSQL's sequences do
   * not notice explicit ids; SQLite's AUTOINCREMENT does. `executor` runs it inside a transaction.
   */
  resetSequences(executor?: Kysely<DatabaseSchema>, handedOut?: Record<string, number>): Promise<void>;
  /**
   * An expression building each row's JSON text from its columns, keys in the order given,
   * values written as the API writes them (see JsonField). Migration 0003 fills
   * conversions.entry_json with it.
   */
  jsonObject(table: string, fields: readonly JsonField[]): RawBuilder<string>;
  /**
   * A text as the service reads it cheapest in bulk: SQLite's as bytes (a BLOB reaches the
   * service as UTF-8 without being decoded into a JavaScript string and encoded again to be
   * sent); PostgreSQL's as text (its driver would decode a bytea from hex).
   */
  textAsBytes(text: RawBuilder<string>): RawBuilder<Uint8Array | string>;
  /**
   * Whether a page of JSON texts (a list's page, an export's batch) is read cheapest joined by
   * the database into one value (SQLite: bytes that reach the response as they are, see
   * textAsBytes) rather than a row each (PostgreSQL, where joining them took about twice as long
   * as sending them as rows).
   */
  joinsTextPages: boolean;
  /**
   * `insert`, made to skip each row whose values in `columns`, a unique constraint's, are there
   * already. PostgreSQL: `ON CONFLICT (columns) DO NOTHING`. SQLite: `INSERT OR IGNORE`, which
   * would also skip a row breaking a NOT NULL constraint (rows are validated before they get
   * here). With SQLite's `ON CONFLICT`, a statement of many rows could still fail halfway on
   * another constraint, so SQLite first copied every page the statement changed into a
   * statement journal, a file of its own (docs/performance.md).
   */
  skipExisting<T extends keyof DatabaseSchema & string, O>(
    insert: InsertQueryBuilder<DatabaseSchema, T, O>,
    columns: readonly (keyof DatabaseSchema[T] & string)[],
  ): InsertQueryBuilder<DatabaseSchema, T, O>;
  /** Connections of the PostgreSQL pool, for metrics; undefined on SQLite's single connection. */
  poolStats(): { total: number; idle: number; waiting: number } | undefined;
  close(): Promise<void>;
}

/** What repositories write differently for each engine: how texts are read cheapest in bulk, how an insert skips rows there already. */
export type EngineSql = Pick<Database, 'textAsBytes' | 'joinsTextPages' | 'skipExisting'>;

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
  /** Text that compares by code point, so that filters and sorting agree on both engines. */
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
  /**
   * Opened by a command-line process, which does one task and keeps no event loop free for
   * others: SQLite runs its statements on the calling thread, instead of a thread of their own
   * that an import's every batch of 10,000 values would be copied to.
   */
  commandLine?: boolean;
}

export type ConversionSourceAddress = { engine: 'sqlite'; file: string } | { engine: 'postgres'; url: string };
