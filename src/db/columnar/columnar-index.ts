import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Filter } from '../../filters/parse.js';
import { startChildProcess } from '../child-process.js';
import { type ProgressAt, secondsLeft } from './catch-up-pace.js';
import {
  type BatchOfIds,
  type CatchUpProgress,
  type ColumnarAnswer,
  type ColumnarOptions,
  type ColumnarQuestion,
  type ColumnarRequest,
  type ColumnarResponse,
  type PageOfIds,
  removeIndexFiles,
  type SummaryRows,
} from './protocol.js';

export type { BatchOfIds, CatchUpProgress, PageOfIds, SummaryRows } from './protocol.js';

export type IndexSettings = Omit<ColumnarOptions, 'file' | 'temporary'> & {
  /** The DuckDB file to keep, or undefined for one of this instance's own, removed when it closes. */
  file: string | undefined;
  /** How long a question is waited for, catching up included, before it fails with IndexTooSlowError. */
  questionTimeoutMs: number;
};

/**
 * A question the index did not answer in time (IndexSettings.questionTimeoutMs): most often
 * one that waits for a long catch-up, after a large import or while the index is built afresh,
 * which `progress` then tells how far it is.
 */
export class IndexTooSlowError extends Error {
  constructor(
    readonly limitMs: number,
    readonly progress: CatchUpProgress | undefined,
    /** The seconds the catch-up has left at its pace so far, when it has one. */
    readonly secondsLeft?: number,
  ) {
    super(`the columnar index did not answer within ${limitMs} ms`);
    this.name = 'IndexTooSlowError';
  }

  /** How much of the catch-up under way is done, in whole percent; undefined when none is. */
  get percentDone(): number | undefined {
    if (!this.progress) return undefined;
    const { fromId, atId, toId } = this.progress;
    return Math.floor((100 * (atId - fromId)) / Math.max(1, toId - fromId));
  }
}

/**
 * A question asked while the index cannot answer at all: it failed to open (its file held by
 * another process, say), and is tried again in the background, or its process stopped under the
 * question. Asking again later may be answered.
 */
export class IndexUnavailableError extends Error {
  constructor(reason: string) {
    super(`the columnar index is unavailable: ${reason}`);
    this.name = 'IndexUnavailableError';
  }
}

/**
 * How the index stands, for readiness and metrics: answering (`ok`), in a long catch-up after a
 * large write or while it builds itself (questions may wait past their time limit meanwhile), or
 * not opened at all; `rowsBehind`, the rows a long catch-up has yet to take in.
 */
export interface IndexStatus {
  state: 'ok' | 'catching up' | 'unavailable';
  rowsBehind: number;
}

// The longest a closing index process is waited for before it is killed (ColumnarIndex.close).
const CLOSE_GRACE_MS = 10_000;
// How long after failing to open the index is tried again, meanwhile answering no question.
const REOPEN_AFTER_MS = 5_000;

// Files this process has open: a second index over the same file (two apps in one process) gets its own.
const filesInUse = new Set<string>();

/**
 * The columnar index of an append-only table, in a process of its own (index-process.ts) at a
 * lower priority, so that no count or scan ever runs on the event loop or takes the processor
 * from requests. A process that stops is started again at the next question; one that cannot
 * open the index is started again REOPEN_AFTER_MS later, in the background, and until one opens
 * it every question fails at once with IndexUnavailableError.
 */
export class ColumnarIndex {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<number, { resolve: (answer: ColumnarAnswer) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  private readonly file: string;
  private readonly ownFile: boolean;
  private markOpened!: (opened: boolean) => void;
  /** Why the index could not open, until a process opens it. */
  private openFailure: string | undefined;
  private reopenTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Settles once the first process has opened the index (true) or failed to (false); it may still be catching up. */
  readonly opened = new Promise<boolean>((resolve) => (this.markOpened = resolve));
  /** How far the long catch-up under way has come, if one is. */
  catchingUp: CatchUpProgress | undefined;
  /** Where that catch-up stood when this service first heard of it, to tell its pace. */
  private catchUpFirstSeen: ProgressAt | undefined;

  status(): IndexStatus {
    if (this.openFailure !== undefined) return { state: 'unavailable', rowsBehind: 0 };
    if (!this.catchingUp) return { state: 'ok', rowsBehind: 0 };
    return { state: 'catching up', rowsBehind: this.catchingUp.toId - this.catchingUp.atId };
  }

  constructor(
    private readonly settings: IndexSettings,
    private readonly log: (message: string) => void,
  ) {
    this.ownFile = settings.file === undefined || filesInUse.has(settings.file);
    this.file = this.ownFile ? path.join(os.tmpdir(), `acds-columnar-${randomUUID()}.duckdb`) : settings.file!;
    filesInUse.add(this.file);
    this.start(); // now rather than at the first question: it may have a whole table to index
  }

  /** The rows of `accountId` matching `filters`, every one up to id `newestId` at least. */
  page(accountId: number, newestId: number, filters: Filter[], page: number): Promise<PageOfIds> {
    return this.ask({ kind: 'page', accountId, newestId, filters, page }) as Promise<PageOfIds>;
  }

  /**
   * The sums of the rows of `accountId` matching `filters`, by `groupBy` (time buckets of
   * created_at in `timeZone`, or columns), every one up to id `newestId` at least.
   */
  summary(accountId: number, newestId: number, filters: Filter[], groupBy: string[], timeZone: string): Promise<SummaryRows> {
    return this.ask({ kind: 'summary', accountId, newestId, filters, groupBy, timeZone }) as Promise<SummaryRows>;
  }

  /**
   * Up to `limit` ids after `afterId` of the rows of `accountId` matching `filters`, in ascending
   * order, up to `upTo` (the answer's own `upTo` for the first batch, every row up to `newestId` at least).
   */
  idsAfter(accountId: number, newestId: number, filters: Filter[], afterId: number, upTo: number | undefined, limit: number): Promise<BatchOfIds> {
    return this.ask({ kind: 'ids', accountId, newestId, filters, afterId, upTo, limit }) as Promise<BatchOfIds>;
  }

  /**
   * Sends a question and waits for its answer up to the time limit. A question given up on is
   * forgotten by the process unless it is running already (its catch-up goes on and serves the
   * next one); a late answer is dropped.
   */
  private ask(question: ColumnarQuestion): Promise<ColumnarAnswer> {
    if (this.openFailure !== undefined) return Promise.reject(new IndexUnavailableError(this.openFailure));
    const child = this.child ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const limitMs = this.settings.questionTimeoutMs;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        const progress = this.catchingUp;
        const first = this.catchUpFirstSeen;
        reject(new IndexTooSlowError(limitMs, progress, progress && first && secondsLeft(first, progress, Date.now())));
        if (this.child === child && child.connected) child.send({ kind: 'forget', id } satisfies ColumnarRequest);
      }, limitMs);
      this.pending.set(id, {
        resolve: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      child.send({ id, ...question } satisfies ColumnarRequest);
    });
  }

  /**
   * Asks the process to close its index and waits for it to end; one that has not ended within
   * the time limit of a question (at most CLOSE_GRACE_MS) is killed, as a crash would end it,
   * so that a stuck index never keeps the service from shutting down.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reopenTimer);
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const closed = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ kind: 'close' } satisfies ColumnarRequest);
      const graceMs = Math.min(this.settings.questionTimeoutMs, CLOSE_GRACE_MS);
      const kill = setTimeout(() => {
        this.log(`columnar index: its process did not close within ${graceMs} ms; killed`);
        child.kill('SIGKILL');
      }, graceMs);
      await closed;
      clearTimeout(kill);
    }
    filesInUse.delete(this.file);
    if (this.ownFile) removeIndexFiles(this.file);
  }

  private heardOfCatchUp(progress: CatchUpProgress | undefined): void {
    if (!progress) this.catchUpFirstSeen = undefined;
    else if (progress.fromId !== this.catchingUp?.fromId || !this.catchUpFirstSeen) this.catchUpFirstSeen = { atId: progress.atId, atMs: Date.now() };
    this.catchingUp = progress;
  }

  private start(): ChildProcess {
    const child = startChildProcess(import.meta.url, 'index-process');
    this.child = child;
    const { questionTimeoutMs: _, ...options } = this.settings;
    child.send({ ...options, file: this.file, temporary: this.ownFile } satisfies ColumnarOptions);
    child.on('message', (message: ColumnarResponse) => {
      if ('log' in message) this.log(message.log);
      else if ('catchingUp' in message) this.heardOfCatchUp(message.catchingUp ?? undefined);
      else if ('opened' in message) {
        if (this.openFailure !== undefined) this.log('columnar index: opened');
        this.openFailure = undefined;
        this.markOpened(true);
      } else if ('failed' in message) {
        this.markOpened(false);
        this.log(`columnar index: cannot open: ${message.failed}; trying again in ${REOPEN_AFTER_MS / 1000} s`);
        this.openFailure = message.failed;
        stopped(new IndexUnavailableError(message.failed));
      } else {
        const waiting = this.pending.get(message.id);
        this.pending.delete(message.id);
        if ('error' in message) waiting?.reject(new Error(message.error));
        else waiting?.resolve(message.answer);
      }
    });
    const stopped = (error: Error) => {
      if (this.child === child) this.child = undefined;
      this.heardOfCatchUp(undefined);
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    // A message to a process that has just ended fails here; its question fails with the exit below.
    child.on('error', (error) => this.log(`columnar index: its process failed: ${error.message}`));
    child.on('exit', (code, signal) => {
      this.markOpened(false);
      if (this.openFailure !== undefined && !this.closed) this.reopenTimer = setTimeout(() => this.start(), REOPEN_AFTER_MS).unref();
      stopped(new IndexUnavailableError(`its process stopped (${signal ?? `exit code ${code}`}); it starts again at the next question`));
    });
    return child;
  }
}
