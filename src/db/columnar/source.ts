import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { ConversionSourceAddress } from '../adapter.js';
import { POSTGRES_TYPES } from '../postgres/database.js';

/**
 * The system of record, as the columnar index reads it: rows only ever appended, with rising ids
 * (Database.serializeConversionWrites), read after the last id indexed. Each row comes as an
 * array: id, account_id, then `columns` in order (array columns as their stored JSON text).
 */
export interface RowSource {
  /** A random value made with the source's tables (migration 0007): another source, another index. */
  identity(): Promise<string>;
  largestId(): Promise<number>;
  rowsAfter(id: number, limit: number): Promise<unknown[][]>;
  /** As rowsAfter, the rows of one account only, found through an index that begins with the account. */
  accountRowsAfter(accountId: number, id: number, limit: number): Promise<unknown[][]>;
  /** The ids of the rows of the import whose advance copy is `token` (advance-copy.ts), once it has committed. */
  importMark(token: string): Promise<{ firstId: number; lastId: number } | undefined>;
  close(): Promise<void>;
}

/**
 * Reads the rows after id `afterId` in batches of `batchRows` and hands each to `append`, until a
 * read comes back short of a batch. That read began after the catch-up did, so it held every row
 * committed before then: whoever waits for the catch-up has theirs. Reading on would chase the
 * rows written meanwhile and, while they keep coming (a cart's notifications), never end.
 */
export async function appendInBatches(
  afterId: number,
  batchRows: number,
  rowsAfter: RowSource['rowsAfter'],
  append: (rows: unknown[][]) => Promise<void>,
): Promise<void> {
  for (let id = afterId; ; ) {
    const rows = await rowsAfter(id, batchRows);
    if (rows.length > 0) {
      await append(rows);
      id = Number(rows.at(-1)![0]);
    }
    if (rows.length < batchRows) return;
  }
}

/** The source's statements, their parameters numbered as PostgreSQL numbers them. */
export function sourceStatements(table: string, columns: string[]) {
  return {
    rowsAfter: `select id, account_id, ${columns.join(', ')} from ${table} where id > $1 order by id limit $2`,
    // The ids through an index that begins with the account: the unary plus, in the condition and
    // in the order, keeps the database from walking the primary key instead, through every other
    // account's rows above the id, which are what make the account's rows worth reading on their own.
    accountRowsAfter: `select id, account_id, ${columns.join(', ')} from ${table} where id in (select id from ${table} where account_id = $1 and +id > $2 order by +id limit $3) order by id`,
    identity: `select identity from ${table}_identity`,
    largestId: `select coalesce(max(id), 0) as id from ${table}`,
    importMark: 'select first_id as "firstId", last_id as "lastId" from conversion_imports where token = $1',
  };
}

/** A statement of sourceStatements with SQLite's parameters. */
export const withSqliteParameters = (statement: string) => statement.replace(/\$\d+/g, '?');

export function openRowSource(address: ConversionSourceAddress, table: string, columns: string[]): RowSource {
  const statements = sourceStatements(table, columns);
  if (address.engine === 'sqlite') {
    // Synchronous, in the index's own process: readonly, beside the service's writer (WAL).
    const connection = new SQLite(address.file, { readonly: true, fileMustExist: true });
    connection.pragma('busy_timeout = 5000');
    const rows = connection.prepare(withSqliteParameters(statements.rowsAfter)).raw(true);
    const accountRows = connection.prepare(withSqliteParameters(statements.accountRowsAfter)).raw(true);
    const mark = connection.prepare(withSqliteParameters(statements.importMark));
    return {
      identity: async () => (connection.prepare(statements.identity).get() as { identity: string }).identity,
      largestId: async () => (connection.prepare(statements.largestId).get() as { id: number }).id,
      rowsAfter: async (id, limit) => rows.all(id, limit) as unknown[][],
      accountRowsAfter: async (accountId, id, limit) => accountRows.all(accountId, id, limit) as unknown[][],
      importMark: async (token) => mark.get(token) as { firstId: number; lastId: number } | undefined,
      close: async () => {
        connection.close();
      },
    };
  }
  const pool = new pg.Pool({ connectionString: address.url, max: 1, types: POSTGRES_TYPES });
  pool.on('error', () => {}); // an idle connection closed by the server is replaced by the next query
  return {
    identity: async () => (await pool.query<{ identity: string }>(statements.identity)).rows[0]!.identity,
    largestId: async () => (await pool.query<{ id: number }>(statements.largestId)).rows[0]!.id,
    rowsAfter: async (id, limit) => (await pool.query<unknown[]>({ text: statements.rowsAfter, values: [id, limit], rowMode: 'array' })).rows,
    accountRowsAfter: async (accountId, id, limit) =>
      (await pool.query<unknown[]>({ text: statements.accountRowsAfter, values: [accountId, id, limit], rowMode: 'array' })).rows,
    importMark: async (token) => (await pool.query<{ firstId: number; lastId: number }>(statements.importMark, [token])).rows[0],
    close: () => pool.end(),
  };
}
