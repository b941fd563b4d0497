import fs from 'node:fs';
import type { FilterColumn } from '../../filters/catalogue.js';
import type { Filter } from '../../filters/parse.js';
import type { ConversionSourceAddress } from '../database.js';

/** What the index reads from each source row: its id and account, some columns as stored, and a JSON document holding the rest. */
export interface SourceLayout {
  /** Columns the row holds as they are (created_at as epoch seconds), read from it rather than from the document. */
  rowColumns: string[];
  /** The column of the row's JSON document (the entry), from which every other column is read. */
  document: string;
}

/** A time bucket of `created_at`, in the asker's time zone. */
export type TimeBucket = 'hour' | 'day' | 'week' | 'month';
export const TIME_BUCKETS: readonly TimeBucket[] = ['hour', 'day', 'week', 'month'];

/** The most groups a summary answers; one more is asked for, to know that there are more. */
export const MAX_SUMMARY_GROUPS = 10_000;

/** What the columnar index's process is started with (index-process.ts), its first message. */
export interface ColumnarOptions {
  /** The DuckDB file; it holds nothing that the source does not, and is rebuilt when lost. */
  file: string;
  /** The file is this service's alone (PostgreSQL's, or a second index over a file in use): removed when the index ends. */
  temporary: boolean;
  source: ConversionSourceAddress;
  /** Which of the source row's columns the index reads, and the JSON document it reads the others from. */
  sourceLayout: SourceLayout;
  /** The table in the source, and the index's own name for it. */
  table: string;
  /** Its filterable columns, as the filter catalogue has them (an array column has a table of its own). */
  columns: FilterColumn[];
  /**
   * Columns whose distinct values a summary counts and no filter names (buyers' e-mail
   * addresses): kept as a 64-bit hash of each value, `<name>_hash`, which DuckDB counts distinct
   * faster than text. Among n distinct values two share a hash with a chance of about n² / 2^65:
   * one in 30 million for a million buyers.
   */
  hashed: string[];
  /** DuckDB's memory_limit, such as '128MB'. */
  memoryLimit: string;
  /** DuckDB's threads. */
  threads: number;
  /** How often the index appends the source's new rows; an export after a write waits for them, a page or a summary reads them itself. */
  pollMs: number;
  /** Added to the nice value of the index's process: all its work yields the processor to the service. */
  niceness: number;
}

/** How far a long catch-up (after a large import, or building the index afresh) has come: the source's ids it spans. */
export interface CatchUpProgress {
  /** The largest id indexed when it began. */
  fromId: number;
  /** The largest id indexed so far. */
  atId: number;
  /** The largest id in the source when it began. */
  toId: number;
}

/**
 * A question about one account's rows, answered with every one of them up to id `newestId` at
 * least: an id none of the account's rows lay above when it was asked (conversion_versions).
 * The rows of other accounts above the index's watermark need not be waited for.
 */
interface Question {
  accountId: number;
  newestId: number;
  filters: Filter[];
}

/** The number of rows matching a question and the ids of one page, in ascending order. */
export interface PageOfIds {
  total: number;
  ids: number[];
}

/**
 * The sums of the rows matching a question, by group: each row of `groups` holds the group's
 * keys (in `groupBy` order) and then the measures, as `totals` holds them for every matching
 * row counted once: conversions, amount, tax_amount, shipping_amount, average_amount, buyers.
 */
export interface SummaryRows {
  groups: (string | number | null)[][];
  totals: (number | null)[];
}

/** The next ids of an export, and the id it reads up to: every batch of one export is of the same rows. */
export interface BatchOfIds {
  ids: number[];
  upTo: number;
}

/** What the index is asked, and answers with a PageOfIds, SummaryRows or BatchOfIds in that order. */
export type ColumnarQuestion =
  | ({ kind: 'page'; page: number } & Question)
  /** `groupBy` names time buckets (TIME_BUCKETS) or columns of the index. */
  | ({ kind: 'summary'; groupBy: string[]; timeZone: string } & Question)
  /** `upTo` undefined: as of now (the first batch); else the `upTo` of the batch before. */
  | ({ kind: 'ids'; afterId: number; upTo: number | undefined; limit: number } & Question);

export type ColumnarAnswer = PageOfIds | SummaryRows | BatchOfIds;

/**
 * A question, numbered for its answer; the service no longer waiting for question `id` (its time
 * limit passed), which is then not run if it has not begun; or the service closing the index:
 * the process ends once it has.
 */
export type ColumnarRequest = (ColumnarQuestion & { id: number }) | { kind: 'forget'; id: number } | { kind: 'close' };

export type ColumnarResponse =
  | { id: number; answer: ColumnarAnswer }
  | { id: number; error: string }
  /** The process has opened the index and the source; it may still be catching up. */
  | { opened: true }
  /** The process could not start: it ends. */
  | { failed: string }
  | { log: string }
  /** A long catch-up's progress, sent as it begins and after each batch; null once it has ended. */
  | { catchingUp: CatchUpProgress | null };

/** Removes an index's file, its journal and what DuckDB spilled beside it. */
export function removeIndexFiles(file: string): void {
  for (const path of [file, `${file}.wal`, `${file}.tmp`]) fs.rmSync(path, { force: true, recursive: true });
}
