import { parentPort, workerData } from 'node:worker_threads';
import { cachingPrepare, openConnection, type ConnectionOptions } from './connection.js';

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

export type WorkerOptions = ConnectionOptions;

const options = workerData as WorkerOptions;
const connection = openConnection(options);
const prepare = cachingPrepare(connection);

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
