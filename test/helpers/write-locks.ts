// Another writer's open transaction, holding the locks an account's writes or an import need, so a test can make them wait.
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { sqliteFiles } from '../../src/db/sqlite/connection.js';

/**
 * Another writer of the account inside its transaction, such as a key being made on the command
 * line: on SQLite it holds the main file's one write lock, on PostgreSQL the account's row, which
 * every asset write of the account updates (its data version). Returns what ends the transaction.
 */
export async function holdWrites(database: { dataDir: string; databaseUrl: string | undefined }, accountId: number): Promise<() => Promise<void>> {
  if (database.databaseUrl === undefined) return holdSqliteWriter(sqliteFiles(database.dataDir).main);
  return holdInPostgres(database.databaseUrl, 'select 1 from accounts where id = $1 for update', [accountId]);
}

/**
 * What a running import holds until its commit: on SQLite the conversions file's one write lock,
 * on PostgreSQL the account's conversion version row. Returns what ends the transaction.
 */
export async function holdImportWrites(database: { dataDir: string; databaseUrl: string | undefined }, accountId: number): Promise<() => Promise<void>> {
  if (database.databaseUrl === undefined) return holdSqliteWriter(sqliteFiles(database.dataDir).conversions);
  return holdInPostgres(
    database.databaseUrl,
    'insert into conversion_versions values ($1, 1) on conflict (account_id) do update set version = conversion_versions.version + 1',
    [accountId],
  );
}

async function holdSqliteWriter(file: string): Promise<() => Promise<void>> {
  const connection = new SQLite(file);
  connection.exec('begin immediate');
  return async () => {
    connection.exec('rollback');
    connection.close();
  };
}

async function holdInPostgres(databaseUrl: string, statement: string, parameters: unknown[]): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('begin');
  await client.query(statement, parameters);
  return async () => {
    await client.query('rollback');
    await client.end();
  };
}
