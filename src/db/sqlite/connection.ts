import path from 'node:path';
import SQLite from 'better-sqlite3';
import { LRUCache } from 'lru-cache';

/**
 * The embedded database is two files in DATA_DIR. Conversions live in a file of their own,
 * attached to every connection under this schema name: an import holds that file's one writer
 * from its first row to its commit, and asset and key writes go to the main file meanwhile.
 * Unqualified table names find the conversions tables there, so SQL names no file.
 */
export const CONVERSIONS_SCHEMA = 'conv';

/**
 * What a write-ahead log is cut back to once it starts over. SQLite reuses its log file rather
 * than shrinking it, and only the last connection's close removes it: an import of 1,000,000
 * conversions while the service ran left a log of 1.1 GB beside the database for as long as the
 * service ran.
 */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * The page size of a new conversions file. A conversion's row holds its entry, about a kilobyte
 * of JSON: with pages of 16 KiB instead of SQLite's 4 KiB an import spends less in the B-trees
 * and writes, and checkpoints, fewer frames; a commit of a few rows (a cart notification's)
 * writes larger ones (both measured in docs/performance.md). SQLite sets a file's page size
 * when it first writes it; an existing file keeps its own.
 */
export const CONVERSIONS_PAGE_SIZE = 16 * 1024;

export function sqliteFiles(dataDir: string): { main: string; conversions: string } {
  return { main: path.join(dataDir, 'acds.sqlite'), conversions: path.join(dataDir, 'conversions.sqlite') };
}

export interface ConnectionOptions {
  dataDir: string;
  /** A reader never writes: SQLite refuses its writes, so a statement sent to the wrong connection fails loudly. */
  readonly: boolean;
  /** Page cache per connection, in KiB. */
  cacheKiB: number;
}

/** One connection to both files, set up as every connection of the service must be. */
export function openConnection({ dataDir, readonly, cacheKiB }: ConnectionOptions): SQLite.Database {
  const files = sqliteFiles(dataDir);
  const connection = new SQLite(files.main, { readonly, fileMustExist: readonly });
  // A writer waits this long for a writer of another process (the command line) before it fails.
  connection.pragma('busy_timeout = 5000');
  connection.prepare(`attach database ? as ${CONVERSIONS_SCHEMA}`).run(files.conversions);
  if (!readonly) connection.pragma(`${CONVERSIONS_SCHEMA}.page_size = ${CONVERSIONS_PAGE_SIZE}`);
  for (const schema of ['main', CONVERSIONS_SCHEMA]) {
    // WAL lets readers read while another connection writes; FULL makes every commit durable.
    if (!readonly) {
      connection.pragma(`${schema}.journal_mode = WAL`);
      connection.pragma(`${schema}.journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    }
    connection.pragma(`${schema}.synchronous = FULL`);
    connection.pragma(`${schema}.cache_size = -${cacheKiB}`);
  }
  connection.pragma('foreign_keys = ON');
  return connection;
}

const STATEMENT_CACHE_SIZE = 256;

/**
 * The connection's prepare, keeping the recent statements by their SQL: preparing a list page's
 * statement, or an import batch's of some 10,000 values, costs more than running it.
 */
export function cachingPrepare(connection: SQLite.Database): (sql: string) => SQLite.Statement {
  const statements = new LRUCache<string, SQLite.Statement>({ max: STATEMENT_CACHE_SIZE });
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = connection.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
}
