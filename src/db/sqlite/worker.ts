import { parentPort, workerData } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { openConnection, type ConnectionOptions } from './connection.js';
import { LRUCache } from 'lru-cache';

/**
 * A thread that owns one SQLite connection and runs the statements the service sends it, so
 * that neither a slow statement nor a wait for SQLite's one writer ever holds the event loop.
 * better-sqlite3 is synchronous: here that blocks this thread only.
 */

export interface StatementRequest {
  id: number;
  sql: string;
  parameters: readonly unknown[];
}

export type StatementResponse =
  | { id: number; rows: unknown[] }
  | { id: number; rows: []; changes: number; lastInsertRowid: number | bigint }
  | { id: number; error: { message: string; code?: string } };

const STATEMENT_CACHE_SIZE = 256;

export type WorkerOptions = ConnectionOptions;

const options = workerData as WorkerOptions;
const connection = openConnection(options);
// Preparing a list page's statement costs more than running it: keep the recent ones by their SQL.
const statements = new LRUCache<string, SQLite.Statement>({ max: STATEMENT_CACHE_SIZE });

function prepare(sql: string): SQLite.Statement {
  let statement = statements.get(sql);
  if (!statement) {
    statement = connection.prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}

function run({ id, sql, parameters }: StatementRequest): StatementResponse {
  try {
    const statement = prepare(sql);
    if (statement.reader) return { id, rows: statement.all(parameters) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { id, rows: [], changes, lastInsertRowid };
  } catch (error) {
    const { message, code } = error as { message: string; code?: string };
    return { id, error: { message, code } };
  }
}

// Told once the connection is open: a statement's time limit counts from then, not from the thread's start.
parentPort!.postMessage('ready');

parentPort!.on('message', (request: StatementRequest | 'close') => {
  if (request === 'close') {
    connection.close();
    parentPort!.close();
    return;
  }
  const response = run(request);
  const transfer: ArrayBuffer[] = [];
  if ('rows' in response)
    for (const row of response.rows as Record<string, unknown>[])
      for (const value of Object.values(row))
        if (value instanceof Uint8Array && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) transfer.push(value.buffer as ArrayBuffer);
  parentPort!.postMessage(response, transfer);
});
