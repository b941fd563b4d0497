import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type ColumnDefinitionBuilder, type RawBuilder } from 'kysely';
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
   * Moves every auto-increment counter past the largest id its table holds, so that rows copied
   * in with their ids (migrate-data) are not collided with by new ones. PostgreSQL's sequences do
   * not notice explicit ids; SQLite's AUTOINCREMENT does, so there it does nothing. `executor`
   * runs it inside a transaction.
   */
  resetSequences(executor?: Kysely<DatabaseSchema>): Promise<void>;
  /** Connections of the PostgreSQL pool, for metrics; undefined on SQLite's single connection. */
  poolStats(): { total: number; idle: number; waiting: number } | undefined;
  close(): Promise<void>;
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
  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: connection }) });
  return {
    db,
    engine: 'sqlite',
    columnTypes: {
      autoId: (column) => column.primaryKey().autoIncrement(),
      autoIdType: 'integer',
      text: sql`text`,
    },
    isUniqueViolation: (error) => (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE' || (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
    resetSequences: async () => {},
    poolStats: () => undefined,
    close: () => db.destroy(),
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
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  };
}
