import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ConversionSourceAddress } from '../adapter.js';

/**
 * An import's advance copy: the rows a command-line import has written in its transaction, copied
 * to a file beside the embedded database as the import goes, so that the columnar index can take
 * them in while the import still runs, instead of after its commit, while the importing account's
 * questions wait for every one of them (docs/performance.md). The index keeps them above its
 * watermark, where no question reads, until the import's own transaction shows it committed
 * (the mark, `conversion_imports`); if the import ends without one, it deletes them.
 *
 * The file: a first line of JSON naming the import ({@link AdvanceCopyHeader}), then two lines a
 * row: a JSON array of its id, account and row columns, then its document as stored (JSON text,
 * one line). Only SQLite has one: there, the import holds the only writer from its first row to
 * its commit, so no other rows take ids among its own, and nothing else commits meanwhile; and
 * the service shares its data folder.
 */
export interface AdvanceCopyHeader {
  token: string;
  /** The importing process: a copy whose process is gone without a mark belongs to an import that did not commit. */
  pid: number;
}

/** The folder of advance copies of an embedded database whose conversions are in `conversionsFile`. */
export function advanceCopyFolder(conversionsFile: string): string {
  return path.join(path.dirname(conversionsFile), 'importing');
}

// The file in the folder naming the process of the index that takes copies in, while it runs.
const READER_FILE = 'reader.pid';

/**
 * Where an import's rows are copied as it writes them (`columns`: the row columns and the document
 * the index reads); undefined where no index takes copies in: beside PostgreSQL, or while no
 * service runs beside the embedded database (the copy would cost the import for nothing).
 */
export function advanceCopyFor(source: ConversionSourceAddress, columns: readonly string[]): AdvanceCopy | undefined {
  if (source.engine !== 'sqlite') return undefined;
  const folder = advanceCopyFolder(source.file);
  let reader: number;
  try {
    reader = Number(fs.readFileSync(path.join(folder, READER_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  return processRuns(reader) ? new AdvanceCopy(folder, columns) : undefined;
}

/** Says, for as long as this process runs, that it takes in the advance copies of `folder`. */
export function announceReader(folder: string): void {
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, READER_FILE), String(process.pid));
}

/** Whether process `pid` runs (on this machine, the one the folder is on). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a copy reads back through the import's transaction: the import's own rows. */
export interface WrittenRows {
  /** Up to `limit` ids after `afterId`, in order. */
  idsAfter(afterId: number, limit: number): Promise<number[]>;
  /** Up to `limit` rows after `afterId`, in id order, as arrays of id, account and `columns`. */
  rowsAfter(afterId: number, limit: number, columns: readonly string[]): Promise<unknown[][]>;
}

// Rows read back a statement at a time, where they are.
const ROWS_PER_READ = 5_000;

/** The command line's side: copies the rows its import writes, and names them for the mark. */
export class AdvanceCopy {
  readonly token = randomUUID();
  readonly file: string;
  private fd: number | undefined;
  private firstId: number | undefined;
  /** The last id copied, or before the first, the largest id before the import. */
  private lastId = 0;
  /** The rows written since the last copy, as inserted, when every one of their batches was new. */
  private uncopied: Record<string, unknown>[] = [];
  private uncopiedInserted = 0;
  private someSkipped = false;

  constructor(
    private readonly folder: string,
    private readonly columns: readonly string[],
  ) {
    this.file = path.join(folder, `${this.token}.rows`);
  }

  /** Where the import's rows begin: after `largestId`, the largest id before its first. */
  start(largestId: number): void {
    this.lastId = largestId;
  }

  /**
   * Takes note of a batch the import has just written into `accountId`: `batch` as it was
   * inserted, of which `inserted` were new; copies the rows once ROWS_PER_READ have been.
   */
  async written(rows: WrittenRows, accountId: number, batch: readonly Record<string, unknown>[], inserted: number): Promise<void> {
    if (inserted === batch.length) this.uncopied.push(...batch);
    else this.someSkipped = true;
    this.uncopiedInserted += inserted;
    if (this.uncopiedInserted >= ROWS_PER_READ) await this.copy(rows, accountId);
  }

  /** Copies what is left, and names the rows copied for the import's mark: undefined when there were none. */
  async finish(rows: WrittenRows, accountId: number): Promise<{ token: string; firstId: number; lastId: number } | undefined> {
    await this.copy(rows, accountId);
    return this.firstId === undefined ? undefined : { token: this.token, firstId: this.firstId, lastId: this.lastId };
  }

  /**
   * Copies the rows written since the last copy. When every one was new, they took the next ids
   * in the order inserted, and only those ids are read back (a row as the index reads it is its
   * columns as inserted); else the rows themselves are.
   */
  private async copy(written: WrittenRows, accountId: number): Promise<void> {
    const count = this.uncopiedInserted;
    const batch = this.someSkipped ? undefined : this.uncopied;
    this.uncopied = [];
    this.uncopiedInserted = 0;
    this.someSkipped = false;
    if (count === 0) return;
    if (batch) {
      const ids = await written.idsAfter(this.lastId, count + 1);
      if (ids.length === count) {
        this.append(batch.map((row, index) => [ids[index], accountId, ...this.columns.map((column) => row[column])]));
        return;
      }
    }
    for (;;) {
      const rows = await written.rowsAfter(this.lastId, ROWS_PER_READ, this.columns);
      if (rows.length > 0) this.append(rows);
      if (rows.length < ROWS_PER_READ) return;
    }
  }

  /** Removes the copy: after the import's commit, or its end without one. */
  remove(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    fs.rmSync(this.file, { force: true });
  }

  private append(rows: unknown[][]): void {
    if (this.fd === undefined) {
      fs.mkdirSync(this.folder, { recursive: true });
      this.fd = fs.openSync(this.file, 'w');
      const header: AdvanceCopyHeader = { token: this.token, pid: process.pid };
      fs.writeSync(this.fd, `${JSON.stringify(header)}\n`);
    }
    const lines: string[] = [];
    // The document is JSON text, one line: it is written as it is, the rest as a JSON array.
    for (const row of rows) lines.push(JSON.stringify(row.slice(0, -1)), row.at(-1) as string);
    lines.push('');
    fs.writeSync(this.fd, lines.join('\n'));
    this.firstId ??= Number(rows[0]![0]);
    this.lastId = Number(rows.at(-1)![0]);
  }
}

/** The index's side: an advance copy found, and once opened, read as far as `offset`. */
export interface AdvanceCopyReading {
  file: string;
  header: AdvanceCopyHeader;
  /** Bytes read so far, up to the end of the last whole row. */
  offset: number;
  /**
   * Open from the first row taken on: the import removes its copy when it ends, commit or not, and
   * what the index has not read yet is read on through this.
   */
  fd?: number;
}

/** The advance copies in `folder` that have their header, oldest first. */
export function advanceCopies(folder: string): AdvanceCopyReading[] {
  let names: string[];
  try {
    names = fs.readdirSync(folder).filter((name) => name.endsWith('.rows'));
  } catch {
    return [];
  }
  const found: { reading: AdvanceCopyReading; at: number }[] = [];
  for (const name of names) {
    const file = path.join(folder, name);
    try {
      const start = Buffer.alloc(HEADER_BYTES);
      const fd = fs.openSync(file, 'r');
      let read: number;
      let at: number;
      try {
        read = fs.readSync(fd, start, 0, HEADER_BYTES, 0);
        at = fs.fstatSync(fd).mtimeMs;
      } finally {
        fs.closeSync(fd);
      }
      const end = start.subarray(0, read).indexOf(10);
      if (end < 0) continue;
      found.push({ reading: { file, header: JSON.parse(start.toString('utf8', 0, end)), offset: end + 1 }, at });
    } catch {
      // Gone meanwhile (its import ended), or not one of ours.
    }
  }
  return found.sort((a, b) => a.at - b.at).map(({ reading }) => reading);
}

const HEADER_BYTES = 4096;
const READ_BYTES = 1024 * 1024;

/**
 * The whole rows of the copy after those read before (each an array of id, account, row columns
 * and document), up to about `limit`, as far as the file has been written; `reading.offset` moves
 * past them. Opens the file at the first call.
 */
export function readAdvanceRows(reading: AdvanceCopyReading, limit: number): unknown[][] {
  reading.fd ??= fs.openSync(reading.file, 'r');
  const rows: unknown[][] = [];
  let pending = Buffer.alloc(0);
  while (rows.length < limit) {
    const chunk = Buffer.alloc(READ_BYTES);
    const read = fs.readSync(reading.fd, chunk, 0, READ_BYTES, reading.offset + pending.length);
    if (read === 0) break;
    pending = pending.length === 0 ? chunk.subarray(0, read) : Buffer.concat([pending, chunk.subarray(0, read)]);
    let start = 0;
    while (rows.length < limit) {
      const first = pending.indexOf(10, start);
      const second = first < 0 ? -1 : pending.indexOf(10, first + 1);
      if (second < 0) break;
      const row = JSON.parse(pending.toString('utf8', start, first)) as unknown[];
      row.push(pending.toString('utf8', first + 1, second));
      rows.push(row);
      start = second + 1;
    }
    reading.offset += start;
    pending = pending.subarray(start);
  }
  return rows;
}

/** Whether the import of the copy has ended, committed or not: its file removed, or its process gone. */
export function importEnded(reading: AdvanceCopyReading): boolean {
  return (reading.fd !== undefined && fs.fstatSync(reading.fd).nlink === 0) || !processRuns(reading.header.pid);
}

/** Closes the copy's file, if it was opened. */
export function stopReading(reading: AdvanceCopyReading): void {
  if (reading.fd !== undefined) fs.closeSync(reading.fd);
  reading.fd = undefined;
}
