import fs from 'node:fs';
import { pipeline, type Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import { AccountRepository } from '../accounts/repository.js';
import type { EngineSql } from '../db/adapter.js';
import type { AdvanceCopy } from '../db/columnar/advance-copy.js';
import type { Database } from '../db/database.js';
import { ConversionRepository, type NewConversion } from './repository.js';
import { fromCsvRecord, IGNORED_FIELD, IMPORT_COLUMNS, validateConversion } from './validate.js';

export type ImportFormat = 'ndjson' | 'csv';

export interface ImportResult {
  read: number;
  inserted: number;
  skipped: number;
  /** Rows whose id field was ignored (IGNORED_FIELD): each imported conversion gets its own. */
  ignoredIds: number;
}

export interface LineProblem {
  line: number;
  reason: string;
}

/** Where an import is (ImportOptions.onProgress). */
export type ImportProgress = { phase: 'reading'; rows: number } | { phase: 'committing' };

/** 1234567 as 1,234,567: counts read as people write them. */
export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/** The file had bad lines; nothing of it was kept. */
export class ImportRejected extends Error {
  constructor(readonly badLines: number) {
    super(`rejected: ${formatCount(badLines)} bad line${badLines === 1 ? '' : 's'}; nothing was imported`);
    this.name = 'ImportRejected';
  }
}

/** What an import writes through. */
export type ImportDatabase = Pick<Database, 'db' | 'serializeConversionWrites'> & EngineSql;

/** The account to import into: its id, or a way to find or make it that says whether it made it. */
export type ImportAccount = number | (() => Promise<{ id: number; created: boolean }>);

export interface ImportOptions {
  /** Told about every bad line as it is found, so that memory stays bounded. */
  onProblem: (problem: LineProblem) => void;
  /**
   * Told where the import is: as it starts reading, every PROGRESS_EVERY rows read, and as it
   * commits; so that a long import can say how far it is while the import itself prints nothing.
   */
  onProgress?: (progress: ImportProgress) => void;
  /**
   * Where the rows are copied as they are written, for the service's index to take in before the
   * commit (advance-copy.ts); the import marks them in its transaction. The caller removes it.
   */
  advanceCopy?: AdvanceCopy;
}

const BATCH_SIZE = 250;
// A conversion with every field at its limit, every character escaped, takes under 2,000,000
// characters of JSON; a longer line is not one conversion (a whole JSON array, say) and is not
// read into memory to its end.
const MAX_LINE_LENGTH = 4 * 1024 * 1024;
// Often enough for a line every few seconds at any speed; what is printed is the caller's choice.
const PROGRESS_EVERY = 1_000;

export function formatOfPath(path: string): ImportFormat {
  if (path === '-' || /\.(ndjson|jsonl)$/i.test(path)) return 'ndjson';
  if (/\.csv$/i.test(path)) return 'csv';
  throw new Error(`cannot tell the format of ${path}: name it .ndjson, .jsonl or .csv, or use - for NDJSON on standard input`);
}

/** An input to import. */
export interface ImportSource {
  stream: Readable;
  /** How much of a file has been read, from 0 to 1; undefined when the size is not known (standard input, a pipe). */
  fractionRead: (() => number) | undefined;
}

/** Why a file cannot be read, by the system's error code, as a person would say it. */
const UNREADABLE: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a folder',
};

/**
 * Opens the input (`-` for standard input) before anything is read from it, so that a file that
 * cannot be read is one line naming it and why.
 */
export async function openSource(path: string): Promise<ImportSource> {
  if (path === '-') return { stream: process.stdin, fractionRead: undefined };
  const unreadable = (why: string) => new Error(`cannot read ${path}: ${why}`);
  let file: fs.promises.FileHandle;
  try {
    file = await fs.promises.open(path, 'r');
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw unreadable(UNREADABLE[code ?? ''] ?? message);
  }
  const stats = await file.stat();
  // A folder opens for reading on Linux; only its first read fails.
  if (stats.isDirectory()) {
    await file.close();
    throw unreadable(UNREADABLE.EISDIR!);
  }
  const stream = file.createReadStream();
  return { stream, fractionRead: stats.isFile() && stats.size > 0 ? () => stream.bytesRead / stats.size : undefined };
}

/**
 * Imports conversions into one account in a single transaction, streaming the input: a file
 * with any bad line changes nothing, and a row already there (same cart and receipt) is
 * skipped, so importing the same file twice adds nothing the second time.
 */
export async function importConversions(
  database: ImportDatabase,
  account: ImportAccount,
  records: RecordBatches,
  options: ImportOptions,
): Promise<ImportResult> {
  // The account is made before the import's transaction, which writes nothing but conversions
  // (on SQLite it would otherwise hold the main file's writer to its end); a rejected file takes
  // an account it made away again.
  const { db } = database;
  const { id: accountId, created } = typeof account === 'number' ? { id: account, created: false } : await account();
  // Accounts are in another file than conversions on SQLite, where no foreign key can check this.
  if (!(await new AccountRepository(db).exists(accountId))) throw new Error(`there is no account ${accountId}`);
  try {
    return await importInTransaction(database, accountId, records, options);
  } catch (error) {
    if (created) await new AccountRepository(db).removeIfEmpty(accountId);
    throw error;
  }
}

function importInTransaction(database: ImportDatabase, accountId: number, batches: RecordBatches, options: ImportOptions): Promise<ImportResult> {
  return database.db.transaction().execute(async (trx) => {
    // Ids become visible in ascending order: the columnar index catches up by id.
    await database.serializeConversionWrites(trx);
    const repository = new ConversionRepository(trx, database);
    const result: ImportResult = { read: 0, inserted: 0, skipped: 0, ignoredIds: 0 };
    let badLines = 0;
    let batch: NewConversion[] = [];
    const { advanceCopy } = options;
    advanceCopy?.start(await repository.largestId());
    const insert = async (rows: NewConversion[]) => {
      const inserted = await repository.insertNew(accountId, rows);
      result.inserted += inserted;
      result.skipped += rows.length - inserted;
      await advanceCopy?.written(repository, accountId, rows, inserted);
    };
    // One batch is inserted while the next is read and checked: PostgreSQL does its part in its
    // own process, so the two overlap (SQLite runs in this thread either way). Its failure is
    // thrown where it is next awaited.
    let inserting: Promise<void> = Promise.resolve();
    const flush = async () => {
      await inserting;
      inserting = insert(batch);
      inserting.catch(() => {});
      batch = [];
    };

    options.onProgress?.({ phase: 'reading', rows: 0 });
    for await (const records of batches) {
      for (const { line, record } of records) {
        result.read += 1;
        const checked = 'problems' in record ? record : validateConversion(record.value);
        if ('problems' in checked) {
          badLines += 1;
          for (const reason of checked.problems) options.onProblem({ line, reason });
        } else if (badLines === 0) {
          if (checked.ignoredId) result.ignoredIds += 1;
          batch.push(checked.row);
          if (batch.length >= BATCH_SIZE) await flush();
        }
        if (result.read % PROGRESS_EVERY === 0) options.onProgress?.({ phase: 'reading', rows: result.read });
      }
    }
    if (badLines === 0) await flush();
    await inserting;
    if (badLines > 0) throw new ImportRejected(badLines);
    // Cached counts and page boundaries of the account's lists are stale from this commit on.
    if (result.inserted > 0) await repository.bumpVersion(accountId);
    const copied = await advanceCopy?.finish(repository, accountId);
    if (copied) await repository.markImport(copied.token, copied.firstId, copied.lastId);
    options.onProgress?.({ phase: 'committing' });
    return result;
  });
}

/** One record of an input, by the line it came from, or the problems that kept it from being read. */
export type SourceRecord = { line: number; record: { value: unknown } | { problems: string[] } };

/**
 * An input's records in batches, as they are read (an NDJSON file's, a chunk of the file at a
 * time): an async step for each record cost about as much as parsing it.
 */
export type RecordBatches = AsyncIterable<readonly SourceRecord[]> | Iterable<readonly SourceRecord[]>;

export function readRecords(input: Readable, format: ImportFormat): AsyncIterable<readonly SourceRecord[]> {
  return format === 'csv' ? csvRecords(input) : ndjsonRecords(input);
}

async function* ndjsonRecords(input: Readable): AsyncGenerator<SourceRecord[]> {
  let line = 0;
  // The text after the last newline read so far: the start of the next line.
  let partial = '';
  const tooLong = (number: number) =>
    new Error(`line ${number} is longer than ${MAX_LINE_LENGTH} characters: NDJSON holds one conversion per line (a JSON array is not NDJSON)`);
  // An input that fails as it is read (a disk error, a closed pipe) ends the records with its error.
  input.setEncoding('utf8');
  let first = true;
  for await (const chunk of input as AsyncIterable<string>) {
    // A byte order mark, which Windows tools write, is no part of the first line.
    const text = partial + (first && chunk.startsWith(BYTE_ORDER_MARK) ? chunk.slice(1) : chunk);
    first = false;
    const records: SourceRecord[] = [];
    let start = 0;
    for (let end = text.indexOf('\n', start); end >= 0; end = text.indexOf('\n', start)) {
      line += 1;
      if (end - start > MAX_LINE_LENGTH) throw tooLong(line);
      const record = ndjsonRecord(text.slice(start, end), line);
      if (record) records.push(record);
      start = end + 1;
    }
    partial = text.slice(start);
    // A longer line is not read into memory to its end.
    if (partial.length > MAX_LINE_LENGTH) throw tooLong(line + 1);
    if (records.length > 0) yield records;
  }
  const last = ndjsonRecord(partial, line + 1);
  if (last) yield [last];
}

/** The record of one line of NDJSON; undefined for a blank line. */
function ndjsonRecord(text: string, line: number): SourceRecord | undefined {
  if (text.trim() === '') return undefined;
  try {
    return { line, record: { value: JSON.parse(text) } };
  } catch {
    return { line, record: { problems: ['the line is not valid JSON: NDJSON holds one JSON object a line'] } };
  }
}

const BYTE_ORDER_MARK = '\uFEFF';

async function* csvRecords(input: Readable): AsyncGenerator<SourceRecord[]> {
  const parser = pipeline(
    input,
    parseCsv({
      bom: true,
      max_record_size: MAX_LINE_LENGTH,
      skip_empty_lines: true,
      info: true,
      columns: (header: string[]) => {
        const unknown = header.filter((name) => !IMPORT_COLUMNS.includes(name) && name !== IGNORED_FIELD);
        if (unknown.length > 0) {
          throw new Error(
            `the CSV header has unknown columns: ${unknown.join(', ')}; the columns are the fields of a conversion: ${IMPORT_COLUMNS.join(', ')}`,
          );
        }
        // A second column of one name would overwrite the first's value without a word.
        const repeated = [...new Set(header.filter((name, index) => header.indexOf(name) !== index))];
        if (repeated.length > 0) throw new Error(`the CSV header names ${repeated.join(', ')} more than once: give each column once`);
        return header;
      },
    }),
    () => {},
  );
  const lines = new CsvLines();
  for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    const converted = fromCsvRecord(record);
    yield [{ line: lines.startOf(record, info.lines), record: 'problems' in converted ? converted : { value: converted.record } }];
  }
}

/**
 * The line each CSV record starts on, from the line csv-parse says it ends on. csv-parse counts
 * a CRLF inside a quoted cell as two lines (csv-parse 7), so the CRLFs of every cell so far are
 * taken off, then the line breaks of the record's own cells.
 */
class CsvLines {
  private crlfsInCells = 0;

  startOf(record: Record<string, string>, reportedEndLine: number): number {
    let breaks = 0;
    for (const value of Object.values(record)) {
      if (!value.includes('\n') && !value.includes('\r')) continue;
      this.crlfsInCells += value.match(/\r\n/g)?.length ?? 0;
      breaks += value.match(/\r\n|\r|\n/g)!.length;
    }
    return reportedEndLine - this.crlfsInCells - breaks;
  }
}
