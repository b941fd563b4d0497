import type { Database, DatabaseOptions } from './adapter.js';
import { openPostgres } from './postgres/database.js';
import { sqliteFiles } from './sqlite/connection.js';
import { openSqlite } from './sqlite/database.js';

export type { ColumnTypes, ConversionSourceAddress, Database, DatabaseOptions, JsonField } from './adapter.js';

/** Opens the configured database: PostgreSQL when a URL is given, else the SQLite files in DATA_DIR. */
export function openDatabase(options: DatabaseOptions): Database {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize ?? 10, options.statementTimeoutMs)
    : openSqlite(options.dataDir, options.statementTimeoutMs, options.commandLine);
}

/** The SQLite file that holds accounts, keys and assets (conversions have their own: sqliteFiles). */
export function sqliteFile(dataDir: string): string {
  return sqliteFiles(dataDir).main;
}
