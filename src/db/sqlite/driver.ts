import type { Worker } from 'node:worker_threads';
import { startWorker } from '../worker-thread.js';
import { type CompiledQuery, RawNode, SelectQueryNode, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely';
import type { StatementRequest, StatementResponse, WorkerOptions } from './worker.js';

/** A read that ran past the statement time limit; its thread was stopped. */
export class StatementTimeoutError extends Error {
  readonly code = 'STATEMENT_TIMEOUT';
  constructor(readonly limitMs: number) {
    super(`the statement ran longer than ${limitMs} ms and was stopped`);
    this.name = 'StatementTimeoutError';
  }
}

export interface WorkerDriverOptions {
  dataDir: string;
  /** Reading threads: each holds a connection, so this many reads run at once. */
  readers: number;
  /** A read running longer is stopped (its thread ended) and fails with StatementTimeoutError; undefined never stops one. */
  statementTimeoutMs: number | undefined;
  /** Page cache of each connection, in KiB. */
  cacheKiB: number;
}

/** One thread with its own SQLite connection, running one statement at a time. */
class SqliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (response: StatementResponse) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;
  /** Settles once the thread has opened its connection. */
  readonly ready: Promise<void>;

  constructor(options: WorkerOptions) {
    this.worker = startWorker(import.meta.url, 'worker', options);
    let opened!: () => void;
    let failedToOpen!: (error: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      opened = resolve;
      failedToOpen = reject;
    });
    this.ready.catch(() => {});
    this.worker.on('message', (response: StatementResponse | 'ready') => {
      if (response === 'ready') return opened();
      const waiting = this.pending.get(response.id);
      this.pending.delete(response.id);
      waiting?.resolve(response);
    });
    // A thread that cannot open its connection, or ends, fails what it was asked and everything after.
    const fail = (error: Error) => {
      this.failure ??= error;
      failedToOpen(error);
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the SQLite thread ended (exit code ${code})`)));
  }

  /** Whether the thread has ended or could not open its connection: it runs nothing more. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  async execute(sql: string, parameters: readonly unknown[]): Promise<QueryResult<any>> {
    if (this.failure) throw this.failure;
    const id = this.nextId++;
    const response = await new Promise<StatementResponse>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, sql, parameters } satisfies StatementRequest);
    });
    if ('error' in response) throw Object.assign(new Error(response.error.message), { code: response.error.code });
    if ('changes' in response) {
      return { rows: [], numAffectedRows: BigInt(response.changes), insertId: BigInt(response.lastInsertRowid) };
    }
    return { rows: response.rows as any[] };
  }

  /** Ends the thread even mid-statement: SQLite's work stops when its current step returns. */
  terminate(): Promise<number> {
    return this.worker.terminate();
  }

  async close(): Promise<void> {
    if (this.failure) return;
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.postMessage('close');
    await exited;
  }
}

/** Lets one holder at a time through, in the order they came. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();

  async lock(): Promise<() => void> {
    let unlock!: () => void;
    const previous = this.tail;
    this.tail = new Promise((resolve) => (unlock = resolve));
    await previous;
    return unlock;
  }
}

/**
 * Kysely's driver for SQLite with every statement run on a thread of its own. Writes, and every
 * statement of a transaction, go to the one writing thread, one transaction at a time (SQLite
 * has one writer per file anyway); plain reads go to a pool of reading threads, each with its
 * own connection, which WAL lets read alongside the writer. So the event loop never waits for
 * SQLite, neither for a slow question nor for another process's write (an import).
 */
export class SqliteWorkerDriver implements Driver {
  private writer!: SqliteThread;
  private readonly writeLock = new Mutex();
  private readonly readers = new Set<SqliteThread>();
  private readonly idleReaders: SqliteThread[] = [];
  private readonly waitingForReader: ((reader: SqliteThread) => void)[] = [];

  /** Settles once the files exist (the writer made them) and a first reader is starting. */
  readonly started: Promise<void>;
  private destroyed = false;

  /** Starts its threads at once: a thread takes tens of milliseconds to start, better not at the first request. */
  constructor(private readonly options: WorkerDriverOptions) {
    this.started = this.start();
    this.started.catch(() => {}); // the first statement reports it
  }

  private async start(): Promise<void> {
    // The writer creates the files; readers open them read-only once they exist.
    this.writer = new SqliteThread({ dataDir: this.options.dataDir, readonly: false, cacheKiB: this.options.cacheKiB });
    await this.writer.execute('select 1', []);
    // One reader ready before the first read; the others start when needed.
    if (!this.destroyed) this.idleReaders.push(this.newReader());
  }

  async init(): Promise<void> {
    await this.started;
  }

  private newReader(): SqliteThread {
    const { dataDir, cacheKiB } = this.options;
    const reader = new SqliteThread({ dataDir, readonly: true, cacheKiB });
    this.readers.add(reader);
    return reader;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this);
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings): Promise<void> {
    const routed = connection as RoutedConnection;
    const unlock = await this.writeLock.lock();
    try {
      await this.writer.execute('begin', []);
      routed.endTransaction = unlock;
    } catch (error) {
      unlock();
      throw error;
    }
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.endTransaction(connection as RoutedConnection, 'commit');
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.endTransaction(connection as RoutedConnection, 'rollback');
  }

  private async endTransaction(connection: RoutedConnection, statement: 'commit' | 'rollback'): Promise<void> {
    try {
      await this.writer.execute(statement, []);
    } finally {
      const unlock = connection.endTransaction;
      connection.endTransaction = undefined;
      unlock?.();
    }
  }

  async releaseConnection(): Promise<void> {}

  /** Ends every thread; safe to call again (Kysely calls it only if it ever used the driver). */
  async destroy(): Promise<void> {
    this.destroyed = true;
    await this.started.catch(() => {});
    // A read still running is ended with its thread; the others close their connections.
    const busy = [...this.readers].filter((reader) => !this.idleReaders.includes(reader));
    const idle = this.idleReaders.splice(0);
    const writer = this.writer;
    this.writer = undefined!;
    this.readers.clear();
    await Promise.all([writer?.close(), ...idle.map((reader) => reader.close()), ...busy.map((reader) => reader.terminate())]);
  }

  /** A statement outside a transaction: a read on a reading thread, anything else on the writer. */
  async executeAlone(query: CompiledQuery): Promise<QueryResult<any>> {
    if (isRead(query)) return this.read(query);
    const unlock = await this.writeLock.lock();
    try {
      return await this.writer.execute(query.sql, query.parameters);
    } finally {
      unlock();
    }
  }

  inTransaction(query: CompiledQuery): Promise<QueryResult<any>> {
    return this.writer.execute(query.sql, query.parameters);
  }

  private async read(query: CompiledQuery): Promise<QueryResult<any>> {
    const reader = await this.takeReader();
    const limitMs = this.options.statementTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    try {
      await reader.ready;
      const execution = reader.execute(query.sql, query.parameters);
      if (limitMs === undefined) return await execution;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(new StatementTimeoutError(limitMs));
        }, limitMs);
      });
      return await Promise.race([execution, deadline]);
    } finally {
      clearTimeout(timer);
      if (timedOut || reader.failed) {
        this.readers.delete(reader);
        void reader.terminate();
        this.handOnReader(undefined);
      } else {
        this.handOnReader(reader);
      }
    }
  }

  private async takeReader(): Promise<SqliteThread> {
    const idle = this.idleReaders.pop();
    if (idle) return idle;
    if (this.readers.size < this.options.readers) return this.newReader();
    return new Promise((resolve) => this.waitingForReader.push(resolve));
  }

  /** Gives a free reader (or, after one was stopped, a new one) to the next waiting read. */
  private handOnReader(reader: SqliteThread | undefined): void {
    const next = this.waitingForReader.shift();
    if (!next) {
      if (reader) this.idleReaders.push(reader);
      return;
    }
    next(reader ?? this.newReader());
  }
}

/** What Kysely calls a connection: a statement's way to the thread that should run it. */
class RoutedConnection implements DatabaseConnection {
  /** Set while this connection holds a transaction; ends it and lets the next writer in. */
  endTransaction: (() => void) | undefined;

  constructor(private readonly driver: SqliteWorkerDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.endTransaction ? this.driver.inTransaction(query) : this.driver.executeAlone(query);
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on SQLite: read in pages');
  }
}

/** Whether a statement only reads: a SELECT, or raw SQL that starts as one. */
function isRead(query: CompiledQuery): boolean {
  if (SelectQueryNode.is(query.query)) return true;
  return RawNode.is(query.query) && /^\s*(select|with)\b/i.test(query.sql) && !/\b(insert|update|delete)\b/i.test(query.sql);
}
