import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection, type DuckDBResultReader, type DuckDBPreparedStatement } from '@duckdb/node-api';
import type { FilterColumn } from '../../filters/catalogue.js';
import { filterKey } from '../../filters/list-cache.js';
import { PAGE_SIZE } from '../../filters/list.js';
import type { Filter } from '../../filters/parse.js';
import { lowerThisProcessesPriority } from '../child-process.js';
import { type AdvanceCopyReading, advanceCopies, advanceCopyFolder, announceReader, importEnded, readAdvanceRows, stopReading } from './advance-copy.js';
import { type OffsetSpan, offsetSpansOver, WINDOW_SECONDS } from './time-zones.js';
import { AppendOnlyAnswers } from './answers.js';
import {
  countAndPagesQuery,
  countQuery,
  duckDbSettings,
  createdAtWindowsQuery,
  deleteAfterStatements,
  idsAfterQuery,
  INCOMING_TABLE,
  reorderByTimeStatements,
  incomingTableStatements,
  indexingStatements,
  layoutStatements,
  pageQuery,
  summaryQueries,
  notWholeCentsBeyond,
  notWholeCentsQuery,
  type SummaryParts,
  summaryMeasures,
  totalsFromGroups,
  type DuckDbQuery,
  type GroupKey,
  type LocalTime,
} from './queries.js';
import { appendInBatches, openRowSource, type RowSource } from './source.js';
import { rowMatcher, type UnindexedRow, unindexedRowOf } from './unindexed-rows.js';
import {
  type BatchOfIds,
  type ColumnarAnswer,
  type ColumnarOptions,
  type ColumnarRequest,
  type ColumnarResponse,
  type PageOfIds,
  removeIndexFiles,
  type SummaryRows,
  TIME_BUCKETS,
  type TimeBucket,
} from './protocol.js';
import { LRUCache } from 'lru-cache';

/**
 * The process that owns the columnar index of one append-only table (conversions): a DuckDB
 * database of its filterable columns, derived from the system of record (SQLite or PostgreSQL)
 * and caught up from it by id. It answers counts and the ids of a page, sums by group and the ids
 * of an export's batches; the rows' entries stay in the system of record. Losing the DuckDB file
 * costs a rebuild, never data. It is a process of its own, at a lower priority than the service,
 * because DuckDB runs queries on libuv's thread pool, which a process shares across its threads:
 * only a process of its own puts all of DuckDB's work below the service's requests.
 */

// The service sends the options first, then requests. A child process's messages are not queued
// for a listener yet to come, so those that arrive while the index opens wait here.
const early: ColumnarRequest[] = [];
let onRequest: (request: ColumnarRequest) => void = (request) => early.push(request);
const options = await new Promise<ColumnarOptions>((resolve) => {
  let first = true;
  process.on('message', (message: ColumnarOptions | ColumnarRequest) => {
    if (first) resolve(message as ColumnarOptions);
    else onRequest(message as ColumnarRequest);
    first = false;
  });
});
lowerThisProcessesPriority(options.niceness);
// The service has gone (ended, or killed): so does its index, and a file of its own. Ctrl-C
// reaches the whole process group; the service closes the index itself on its way out.
process.on('disconnect', () => {
  if (options.temporary) removeIndexFiles(options.file);
  process.exit(0);
});
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
const send = (message: ColumnarResponse, then?: () => void) => process.send!(message, undefined, {}, then);

const { table, columns, hashed, sourceLayout } = options;
// How each column the source row holds as stored is appended, after its id and account; its document follows.
const appendRowColumns = sourceLayout.rowColumns.map((name) => appenderOf(columns.find((column) => column.name === name)!));
// The layout of the derived tables: an index made for another layout is built again. The number
// goes up whenever the tables are made differently from the same columns (3: number ranks; 4: a
// large catch-up's rows put in time order, so that an index from before is built in that order).
const FORMAT = createHash('sha256')
  .update(JSON.stringify([4, table, columns, hashed]))
  .digest('hex')
  .slice(0, 16);
// Rows read from the source and appended in one DuckDB transaction: small enough batches keep
// the memory of a long catch-up down, at no cost in speed (docs/performance.md).
const BATCH_ROWS = 5_000;
// A catch-up of at least this many rows says so in the log, and how far it is every so often.
const LOG_FROM_ROWS = 50_000;
// A catch-up of at least this many rows ends by putting them in time order (reorderByTime).
const REORDER_FROM_ROWS = 50_000;
// The index_meta key of the id after which rows wait to be put in time order (unorderedAfter).
const UNORDERED_AFTER = 'unordered_after';
// The key of index_meta recording that the rows after its id are an import's taken before its commit (advance-copy.ts).
const ADVANCE_AFTER = 'advance_after';
// Where a source row holds created_at: after its id and account, among the row columns.
const CREATED_AT_AT = 2 + sourceLayout.rowColumns.indexOf('created_at');
// The index checkpoints once a catch-up leaves at least this many rows appended since the last
// checkpoint: DuckDB's row group, which a checkpoint writes whole, so that one of a few rows costs
// about as much as one of a row group's worth (an import's rows are taken in while it runs).
const CHECKPOINT_ROWS = 122_880;
// How often, and how many times at most, the checkpoint before a rewrite in time order is tried between questions.
const CHECKPOINT_AGAIN_MS = 50;
const CHECKPOINT_TRIES = 20;
// How long a DuckDB file held by another process is waited for before the index fails to open.
const LOCK_WAIT_MS = 10_000;
// The most rows above the watermark read for pages and summaries (unindexedFor); beyond them a question waits for a catch-up.
const MAX_UNINDEXED_ROWS = 5_000;
// The most rows of one account above the watermark read for a question while more than MAX_UNINDEXED_ROWS lie there
// (accountRowsAbove): read anew for each question, so few; beyond them it waits for a catch-up.
const MAX_ACCOUNT_ROWS_ABOVE = 1_000;
// A page up to this one is found in the same scan that counts (min(id, n) keeps the n smallest).
const COUNTED_PAGES = 10;
// How often a statement to stop is interrupted again until it ends (interruptWhileRunning).
const INTERRUPT_AGAIN_MS = 10;

const log = (message: string) => send({ log: message });
/** The rows a question's statement answers, DuckDB's values as they come (integers as bigint). */
type RowsOf = (query: DuckDbQuery) => Promise<unknown[][]>;
/**
 * The values of the first column a question's statement answers: an export's ids as one array,
 * since as many rows of one value each grew the process's young generation by some 30 MiB.
 */
type FirstColumnOf = (query: DuckDbQuery) => Promise<unknown[]>;

let source: RowSource;
let instance: DuckDBInstance;
let writer: DuckDBConnection;
/**
 * Where the rows are put in time order (reorderByTime): a connection of its own, so that the few
 * rows arriving meanwhile are appended on the writer beside its transaction, not after it.
 */
let rewriter: DuckDBConnection;
// Questions' statements run on this many connections, each one statement at a time: a long one
// (a summary of everything) takes one connection while the questions after it run on another.
const READERS = 2;
let readers: DuckDBConnection[];
/** indexingStatements, prepared on the writer once its tables are made. */
let indexing: DuckDBPreparedStatement[];
/**
 * Each reader's statements kept prepared by their SQL: questions of one kind (a window and a
 * source, say) have one SQL whatever their values, which are bound, so a new question skips
 * DuckDB's parsing and planning. The tables are made (createTables) only as the index opens,
 * before any question. A statement is destroyed only as another is prepared on its reader, which
 * runs one statement at a time: never while it runs.
 */
const PREPARED_PER_READER = 100;
const preparedOn = new Map<DuckDBConnection, LRUCache<string, DuckDBPreparedStatement>>();
const answers = new AppendOnlyAnswers();
interface CreatedAtWindows {
  /** The windows of time (time-zones.ts) that rows lie in, in ascending order. */
  windows: number[];
  /** The rows read for them: ids up to this one. */
  upTo: number;
}
/** The windows each account's `created_at` lie in, kept as rows arrive (they only ever add windows). */
const createdAtWindows = new Map<number, CreatedAtWindows>();
/**
 * The accounts whose money is all whole cents, by the ids read for it: a summary of theirs sums
 * the ranks alone (money.ts). Rows only arrive, so an account found with other money stays so.
 */
const wholeCents = new Map<number, { upTo: number; whole: boolean }>();
/** Time zones' offsets over windows of time, by zone and windows; the latest few kept. */
const offsetsFound = new LRUCache<string, OffsetSpan[]>({ max: 100 });
/**
 * Summaries' totals by account, filters and watermark; the latest few kept. Every grouping and
 * time zone of the same filters shares them (a report asks one filter by day, by source, by
 * cart), and rows arriving above the watermark leave them as they are. They are a statement of
 * their own: distinct buyers are counted over every matching row, since no sum of groups gives them.
 */
const totalsFound = new LRUCache<string, SummaryParts['totals']>({ max: 100 });
// The local time given to a summary without a time bucket, which uses none.
const NO_LOCAL_TIME: LocalTime = { offsets: [], from: 0, to: 0 };
/** Every row of the source up to this id is in the index. */
let watermark = 0;
/**
 * An import's advance copy being taken in (advance-copy.ts): its rows, from `firstId` to `upTo`,
 * are in the index above the watermark, where no question reads, until the import's mark shows
 * it committed. Nothing else is appended meanwhile: the watermark stays where they begin.
 */
let advance: { reading: AdvanceCopyReading; firstId: number; upTo: number; rows: number; orderedUpTo: number | undefined } | undefined;
// Where a command-line import beside the embedded database copies its rows; none beside PostgreSQL.
const advanceFolder = options.source.engine === 'sqlite' ? advanceCopyFolder(options.source.file) : undefined;
/**
 * The rows after this id wait to be put in time order: recorded in the index's file before a
 * large catch-up appends them, and removed by the transaction that puts them in order, so that a
 * rewrite cut short (the process killed, DuckDB's memory short) is done at the next opening.
 */
let unorderedAfter: number | undefined;
/** Whether the catch-up under way ends by putting the rows after unorderedAfter in time order. */
let reorderDue = false;
/**
 * The rows after unorderedAfter being put in time order, on the rewriter, after the catch-up that
 * appended them: questions do not wait for it, since the rows it rewrites are in the index
 * already, and neither do a few rows arriving meanwhile; the next catch-up of a batch or more does.
 */
let reordering: Promise<void> | undefined;
/**
 * The source's rows above the watermark read for questions of pages and summaries, every one
 * up to `unindexedUpTo`, oldest first; those the index appends are dropped (dropIndexed).
 */
let unindexed: UnindexedRow[] = [];
let unindexedUpTo = 0;
/**
 * More rows than MAX_UNINDEXED_ROWS lay above the watermark, up to this id, when they were last
 * read (an import): until the index has appended them, questions read their own account's rows
 * (accountRowsAbove) without reading those again.
 */
let crowdedUpTo = 0;
/** Rows appended since the index last checkpointed (CHECKPOINT_ROWS). */
let uncheckpointedRows = 0;
/**
 * The questions being answered. The connections close only once these have settled: DuckDB
 * 1.5 deadlocks when a connection closes under a statement still running on it (the statement's
 * end destroys the connection's context while holding its lock); closing interrupts the
 * statements running, so that they settle at once.
 */
const beingAnswered = new Map<number, Promise<unknown>>();
/** Questions being answered that the service has stopped waiting for: not run if they have not begun, interrupted if they have. */
const forgotten = new Set<number>();
/** Readers with no statement running, and the statements waiting for one, first come first served (statementResult). */
const idleReaders: DuckDBConnection[] = [];
const waitingForReader: ((reader: DuckDBConnection) => void)[] = [];
/** The question whose statement runs on each busy reader. */
const questionOn = new Map<DuckDBConnection, number>();
/** The end of a long catch-up said to be under way as the index opened (checkSource), which the first catch-up takes over. */
let announcedUpTo: number | undefined;
let closing = false;

/**
 * Appends what the source holds beyond the watermark. The promise is of a catch-up that starts
 * after the call, so that a caller sees every row committed before it called.
 */
const catchingUp = coalesced(() => (closing ? Promise.resolve() : keepIndexing()));
const catchUp = catchingUp.run;

/** Reads the rows above those read before (and above the watermark) for pages and summaries, as catchUp for its caller. */
const readingUnindexed = coalesced(readUnindexed);

try {
  source = openRowSource(options.source, table, [...sourceLayout.rowColumns, sourceLayout.document]);
  ({ instance, writer, rewriter, readers } = await openIndex());
  idleReaders.push(...readers);
  await prepareIndexing();
  await dropUncommittedImport();
  if (advanceFolder) announceReader(advanceFolder);
  watermark = await largestIndexedId();
  unorderedAfter = await recordedUnorderedAfter();
  reorderDue = unorderedAfter !== undefined;
  await checkSource();
} catch (error) {
  // Sent to the service, which logs why the index cannot start and fails its questions with it.
  send({ failed: (error as Error).message }, () => process.exit(1));
  await new Promise(() => {}); // until it has been sent
}
send({ opened: true });
const keepUp = () =>
  void catchUp().catch((error: Error) => {
    log(`columnar index: catching up failed: ${error.message}`);
    endIfInvalidated(error);
  });
const poll = setInterval(keepUp, options.pollMs);
keepUp();

onRequest = answer;
for (const request of early.splice(0)) answer(request);

function answer(request: ColumnarRequest): void {
  if (request.kind === 'close') {
    void close().then(() => process.exit(0));
    return;
  }
  if (request.kind === 'forget') {
    if (!beingAnswered.has(request.id)) return;
    forgotten.add(request.id);
    interruptWhileRunning(request.id);
    return;
  }
  if (closing) {
    send({ id: request.id, error: 'the columnar index is closing' });
    return;
  }
  const { id, accountId, newestId, filters } = request;
  const rowsOf: RowsOf = async (query) => (await statementResult(id, query)).getRows();
  const firstColumnOf: FirstColumnOf = async (query) => (await statementResult(id, query)).getColumns()[0] ?? [];
  const answering = (async (): Promise<ColumnarAnswer | undefined> => {
    if (request.kind === 'page' || request.kind === 'summary') {
      const { upTo, newer } = await unindexedFor(accountId, newestId);
      if (forgotten.has(id)) return undefined;
      if (request.kind === 'summary') return summary(rowsOf, accountId, upTo, newer, filters, request.groupBy, request.timeZone);
      return pageWithNewer(rowsOf, accountId, upTo, newer, filters, request.page);
    }
    // An export's batches are all of its rows up to the first's `upTo`; the first is not run if the service gave up on it meanwhile.
    const rows = await exportRows(accountId, newestId, request.upTo);
    if (forgotten.has(id)) return undefined;
    return idsAfter(firstColumnOf, accountId, rows, filters, request.afterId, request.limit);
  })();
  const sent = answering.then(
    (answer) => answer && send({ id, answer }),
    (error: Error) => {
      // Nobody waits for the answer of a question given up on, nor for why it stopped.
      if (forgotten.has(id)) endIfInvalidated(error);
      else send({ id, error: error.message }, () => endIfInvalidated(error));
    },
  );
  beingAnswered.set(id, sent);
  void sent.finally(() => {
    beingAnswered.delete(id);
    forgotten.delete(id);
  });
}

/**
 * Runs a statement of question `questionId` on a reader once one is free, so that the process
 * knows whose statement runs where and can interrupt it when the service gives up on its
 * question. A question given up on, or the index closing, begins no more statements.
 */
async function statementResult(questionId: number, { sql, params }: DuckDbQuery): Promise<DuckDBResultReader> {
  const reader = idleReaders.pop() ?? (await new Promise<DuckDBConnection>((resolve) => waitingForReader.push(resolve)));
  try {
    if (forgotten.has(questionId)) throw new Error('the service gave up on this question');
    if (closing) throw new Error('the columnar index is closing');
    questionOn.set(reader, questionId);
    const statement = await preparedStatement(reader, sql);
    statement.bind(params.values, params.types);
    return await statement.runAndReadAll();
  } catch (error) {
    if (forgotten.has(questionId) && /^INTERRUPT/.test((error as Error).message)) {
      log('columnar index: stopped a question past the time limit, so that the questions after it are answered');
    }
    throw error;
  } finally {
    questionOn.delete(reader);
    const next = waitingForReader.shift();
    if (next) next(reader);
    else idleReaders.push(reader);
  }
}

/** The statement of this SQL prepared on `reader`, prepared now if it was not (PREPARED_PER_READER). */
async function preparedStatement(reader: DuckDBConnection, sql: string): Promise<DuckDBPreparedStatement> {
  let prepared = preparedOn.get(reader);
  if (!prepared) {
    prepared = new LRUCache({ max: PREPARED_PER_READER, dispose: (statement) => statement.destroySync() });
    preparedOn.set(reader, prepared);
  }
  let statement = prepared.get(sql);
  if (!statement) {
    statement = await reader.prepare(sql);
    prepared.set(sql, statement);
  }
  return statement;
}

/**
 * Interrupts the statement of question `questionId`, if one runs, now and until it ends: DuckDB
 * forgets an interrupt that comes while a statement is still being prepared, so one is not enough.
 */
function interruptWhileRunning(questionId: number): void {
  const interrupt = () => {
    const running = [...questionOn].filter(([, id]) => id === questionId);
    for (const [reader] of running) reader.interrupt();
    return running.length > 0;
  };
  if (!interrupt()) return;
  const again = setInterval(() => {
    if (!interrupt()) clearInterval(again);
  }, INTERRUPT_AGAIN_MS);
}

/**
 * After a fatal error DuckDB refuses every statement on the database until it is opened again:
 * the process ends, and the service starts another at its next question, which opens the file
 * afresh (or builds it again if it is damaged).
 */
function endIfInvalidated(error: Error): void {
  if (!/^FATAL Error|database has been invalidated/.test(error.message)) return;
  send({ log: 'columnar index: DuckDB stopped after a fatal error; the index is opened again at the next question' }, () => process.exit(1));
}

async function openIndex(): Promise<{ instance: DuckDBInstance; writer: DuckDBConnection; rewriter: DuckDBConnection; readers: DuckDBConnection[] }> {
  const settings = duckDbSettings(options.memoryLimit, options.threads);
  let instance: DuckDBInstance;
  try {
    instance = await createWhenUnlocked(settings);
  } catch (error) {
    if (isLocked(error)) throw error; // another service's index, still in use: not ours to replace
    // A damaged file holds nothing the source does not: it is built again.
    log(`columnar index: cannot open ${options.file} (${(error as Error).message}); building it again`);
    removeIndexFiles(options.file);
    instance = await DuckDBInstance.create(options.file, settings);
  }
  const writer = await instance.connect();
  await writer.run('CREATE TABLE IF NOT EXISTS index_meta (key VARCHAR PRIMARY KEY, value VARCHAR)');
  const meta = await writer.runAndReadAll("SELECT value FROM index_meta WHERE key = 'format'");
  const format = meta.getRows()[0]?.[0];
  if (format !== FORMAT) {
    if (format !== undefined) log('columnar index: made for another layout; building it again');
    await createTables(writer);
  }
  for (const statement of incomingTableStatements(columns, hashed, sourceLayout)) await writer.run(statement);
  const readers: DuckDBConnection[] = [];
  for (let count = 0; count < READERS; count++) readers.push(await instance.connect());
  return { instance, writer, rewriter: await instance.connect(), readers };
}

/**
 * Opens the DuckDB file, waiting a while for the index process of a service that has just ended
 * (killed, so it did not close the index) to let go of it.
 */
async function createWhenUnlocked(settings: Record<string, string>): Promise<DuckDBInstance> {
  const giveUpAt = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      return await DuckDBInstance.create(options.file, settings);
    } catch (error) {
      if (!isLocked(error) || Date.now() > giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function isLocked(error: unknown): boolean {
  return /could not set lock/i.test((error as Error).message);
}

async function createTables(connection: DuckDBConnection): Promise<void> {
  await connection.run('BEGIN TRANSACTION');
  for (const statement of layoutStatements(table, columns, hashed)) await connection.run(statement);
  await connection.run(`DELETE FROM index_meta WHERE key IN ('format', 'source', '${UNORDERED_AFTER}', '${ADVANCE_AFTER}')`);
  await connection.run("INSERT INTO index_meta VALUES ('format', $1)", [FORMAT]);
  await connection.run('COMMIT');
}

async function prepareIndexing(): Promise<void> {
  for (const statement of indexing ?? []) statement.destroySync();
  indexing = [];
  for (const statement of indexingStatements(table, columns, hashed, sourceLayout)) indexing.push(await writer.prepare(statement));
}

async function largestIndexedId(): Promise<number> {
  const result = await readers[0]!.runAndReadAll(`SELECT coalesce(max(id), 0) FROM ${table}`);
  return Number(result.getRows()[0]![0]);
}

/** An index of another source (a restored or replaced database) is built again from this one. */
async function checkSource(): Promise<void> {
  const identity = await source.identity();
  const recorded = (await writer.runAndReadAll("SELECT value FROM index_meta WHERE key = 'source'")).getRows()[0]?.[0];
  const largest = await source.largestId();
  if ((recorded !== undefined && recorded !== identity) || watermark > largest) {
    log('columnar index: made from another database; building it again');
    await createTables(writer);
    await prepareIndexing();
    watermark = 0;
    unorderedAfter = undefined;
    reorderDue = false;
    answers.clear();
    createdAtWindows.clear();
    wholeCents.clear();
    totalsFound.clear();
  }
  await writer.run("DELETE FROM index_meta WHERE key = 'source'");
  await writer.run("INSERT INTO index_meta VALUES ('source', $1)", [identity]);
  if (largest - watermark >= LOG_FROM_ROWS) log(`columnar index: indexing conversions after id ${watermark}, up to id ${largest}`);
  // Said before the index opens, so that readiness tells a long build from its first moment; the first catch-up goes on from here.
  if (largest - watermark >= BATCH_ROWS) {
    announcedUpTo = largest;
    send({ catchingUp: { fromId: watermark, atId: watermark, toId: largest } });
  }
}

/**
 * Appends the rows committed since the last catch-up, then takes in an import's rows as it writes
 * them, while it runs (advance-copy.ts): once it commits, they are indexed already.
 */
async function keepIndexing(): Promise<void> {
  if (advance && !(await settleAdvance())) return;
  await appendNewRows();
  await takeAdvanceCopy();
}

/** Begins taking in an import's advance copy, when the index holds every committed row and nothing waits to be put in time order. */
async function takeAdvanceCopy(): Promise<void> {
  if (!advanceFolder || closing || reordering || reorderDue) return;
  for (const reading of advanceCopies(advanceFolder)) {
    // Left by an import whose process was killed: whatever it had written, it did not commit.
    if (importEnded(reading)) {
      fs.rmSync(reading.file, { force: true });
      continue;
    }
    const rows = readAdvanceRows(reading, BATCH_ROWS);
    // Rows above every committed one: an import still in its transaction, and the index holds all before it.
    if (rows.length === 0 || (await source.largestId()) !== watermark || Number(rows[0]![0]) <= watermark) {
      stopReading(reading);
      continue;
    }
    await writer.run(`INSERT OR REPLACE INTO index_meta VALUES ('${ADVANCE_AFTER}', $1)`, [String(watermark)]);
    advance = { reading, firstId: Number(rows[0]![0]), upTo: watermark, rows: 0, orderedUpTo: Number.NEGATIVE_INFINITY };
    log(`columnar index: taking in an import's rows as it writes them, after id ${watermark}`);
    await appendAdvanceRows(rows);
    return;
  }
}

/** Appends the advance copy's rows written since the last read (and `rows`, read already), where no question reads them yet. */
async function appendAdvanceRows(rows?: unknown[][]): Promise<void> {
  const copy = advance!;
  try {
    for (let batch = rows ?? readAdvanceRows(copy.reading, BATCH_ROWS); ; batch = readAdvanceRows(copy.reading, BATCH_ROWS)) {
      if (batch.length > 0) {
        await appendInOneTransaction(batch);
        copy.upTo = Number(batch.at(-1)![0]);
        copy.rows += batch.length;
        copy.orderedUpTo = timeOrderAfter(batch, copy.orderedUpTo);
        uncheckpointedRows += batch.length;
        if (uncheckpointedRows >= CHECKPOINT_ROWS) await checkpoint();
      }
      if (batch.length < BATCH_ROWS || closing) return;
    }
  } catch (error) {
    // A batch read and not appended is not read again: the copy's rows taken in so far are taken
    // out, so that none is missed, and the copy is taken in again from its start or its rows
    // caught up after the commit.
    await dropUncommittedImport('of an import whose copy could not be taken in');
    throw error;
  }
}

/**
 * Takes in what the import has written since, and if it has ended, either moves the watermark past
 * its rows (its mark shows them committed) or deletes them. False while it goes on.
 */
async function settleAdvance(): Promise<boolean> {
  const copy = advance!;
  // Read first: an import that ends after this has committed (or not) before the checks below.
  const ended = importEnded(copy.reading);
  await appendAdvanceRows();
  if ((await source.largestId()) > watermark) {
    const mark = await source.importMark(copy.reading.header.token);
    // The copy was whole before the commit; its last rows may have come since the read above.
    if (mark) await appendAdvanceRows();
    if (mark && mark.firstId === copy.firstId && mark.lastId === copy.upTo) {
      await endAdvance();
      const fromId = watermark;
      watermark = mark.lastId;
      log(`columnar index: an import's ${copy.rows} rows committed, taken in as it ran`);
      if (copy.rows >= REORDER_FROM_ROWS) {
        // As after a large catch-up: rows that came in time order, with none waiting from before them, are in order as appended.
        if (copy.orderedUpTo !== undefined && unorderedAfter === undefined) log(`columnar index: the rows after id ${fromId} came in time order`);
        else {
          await leaveUnordered(fromId);
          startReorder();
        }
      }
      return true;
    }
  } else if (!ended) return false;
  await dropUncommittedImport();
  return true;
}

/** Stops reading the advance copy and removes the index's record of it. */
async function endAdvance(): Promise<void> {
  if (advance) stopReading(advance.reading);
  advance = undefined;
  await writer.run(`DELETE FROM index_meta WHERE key = '${ADVANCE_AFTER}'`);
}

/**
 * Deletes the rows an import had written before a commit that did not come (or that the index did
 * not see, closed meanwhile), or (`whose` says which) taken in from a copy the index failed to read.
 */
async function dropUncommittedImport(whose = 'of an import that did not commit'): Promise<void> {
  const recorded = (await writer.runAndReadAll(`SELECT value FROM index_meta WHERE key = '${ADVANCE_AFTER}'`)).getRows()[0]?.[0];
  if (recorded === undefined) return;
  await writer.run('BEGIN TRANSACTION');
  try {
    for (const { sql, params } of deleteAfterStatements(table, columns, Number(recorded))) await writer.run(sql, params.values, params.types);
    await writer.run('COMMIT');
  } catch (error) {
    await writer.run('ROLLBACK').catch(() => {});
    throw error;
  }
  await endAdvance();
  log(`columnar index: the rows after id ${recorded} ${whose} taken out again`);
}

async function appendNewRows(): Promise<void> {
  const began = performance.now();
  const fromId = watermark;
  let appended = 0;
  let loggedAt = 0;
  // Known once the first batch is a full one, or as the index opened: the questions that wait meanwhile are told how far it is.
  let toId = announcedUpTo;
  announcedUpTo = undefined;
  // Where the rows appended so far came in time order (an import of a history exported oldest first), the last one's time.
  let orderedUpTo: number | undefined = Number.NEGATIVE_INFINITY;
  try {
    await appendInBatches(
      watermark,
      BATCH_ROWS,
      (id, limit) => (closing ? Promise.resolve([]) : source.rowsAfter(id, limit)),
      async (rows) => {
        if (toId === undefined && rows.length === BATCH_ROWS) {
          toId = await source.largestId();
          send({ catchingUp: { fromId, atId: watermark, toId } });
        }
        // A catch-up of a batch or more waits for a rewrite in time order, which it may have to
        // follow with its own; a few rows are appended beside it, so that questions need not wait.
        if (toId !== undefined) await reordering;
        if (!reorderDue && toId !== undefined && toId - fromId >= REORDER_FROM_ROWS) await leaveUnordered(fromId);
        await appendInOneTransaction(rows);
        orderedUpTo = timeOrderAfter(rows, orderedUpTo);
        watermark = Number(rows.at(-1)![0]);
        appended += rows.length;
        if (toId !== undefined) send({ catchingUp: { fromId, atId: watermark, toId: Math.max(toId, watermark) } });
        if (appended - loggedAt >= 10 * BATCH_ROWS) {
          log(`columnar index: ${appended} rows indexed, up to id ${watermark}`);
          loggedAt = appended;
        }
      },
    );
    uncheckpointedRows += appended;
    // Not while the index closes: the rows stay recorded as waiting, and are put in order at the next opening.
    if (reorderDue && !closing) {
      // Rows that came in time order, with none waiting from before them, are in order as appended.
      if (orderedUpTo !== undefined && unorderedAfter === fromId) await recordInOrder();
      else startReorder();
    }
  } finally {
    if (toId !== undefined) send({ catchingUp: null });
  }
  if (appended >= LOG_FROM_ROWS) log(`columnar index: caught up, ${appended} rows in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  if (uncheckpointedRows >= CHECKPOINT_ROWS && !reordering) await checkpoint();
}

/**
 * The time of the last of `rows` if they come in time order after `after` (the time of the row
 * before them, or undefined if the rows before were out of order already); else undefined.
 */
function timeOrderAfter(rows: unknown[][], after: number | undefined): number | undefined {
  let last = after;
  for (const row of rows) {
    const createdAt = Number(row[CREATED_AT_AT]);
    if (last === undefined || createdAt < last) return undefined;
    last = createdAt;
  }
  return last;
}

/** Starts putting the rows after unorderedAfter in time order, not waited for: the questions waiting for a catch-up need only the rows appended. */
function startReorder(): void {
  reordering = reorderByTime().finally(() => {
    reordering = undefined;
  });
}

/** The id after which rows wait to be put in time order, as the index's file records it. */
async function recordedUnorderedAfter(): Promise<number | undefined> {
  const value = (await writer.runAndReadAll(`SELECT value FROM index_meta WHERE key = '${UNORDERED_AFTER}'`)).getRows()[0]?.[0];
  return value === undefined ? undefined : Number(value);
}

/** Records that the rows after `afterId` (and any left waiting before) are to be put in time order at the end of this catch-up. */
async function leaveUnordered(afterId: number): Promise<void> {
  unorderedAfter = Math.min(unorderedAfter ?? afterId, afterId);
  await writer.run(`INSERT OR REPLACE INTO index_meta VALUES ('${UNORDERED_AFTER}', $1)`, [String(unorderedAfter)]);
  reorderDue = true;
}

/** Removes the record of rows waiting to be put in time order: those appended came in it. */
async function recordInOrder(): Promise<void> {
  reorderDue = false;
  await writer.run(`DELETE FROM index_meta WHERE key = '${UNORDERED_AFTER}'`);
  log(`columnar index: the rows after id ${unorderedAfter} came in time order`);
  unorderedAfter = undefined;
}

/**
 * Puts the rows after unorderedAfter in time order (reorderByTimeStatements), in one transaction
 * that also removes the record of them waiting. One that fails leaves them as they were, in id
 * order, which answers the same, more slowly, and still recorded: they are put in order at the
 * end of the next large catch-up, or at the next opening.
 */
async function reorderByTime(): Promise<void> {
  reorderDue = false;
  const afterId = unorderedAfter!;
  const began = performance.now();
  // The rows appended are written to the file first: sorting them while they still took DuckDB's
  // memory ran out of it at the smallest memory limit.
  await checkpoint(CHECKPOINT_TRIES, rewriter);
  try {
    if (closing) throw new Error('the index is closing');
    await rewriter.run('BEGIN TRANSACTION');
    for (const { sql, params } of reorderByTimeStatements(table, afterId)) await rewriter.run(sql, params.values, params.types);
    await rewriter.run(`DELETE FROM index_meta WHERE key = '${UNORDERED_AFTER}'`);
    await rewriter.run('COMMIT');
    unorderedAfter = undefined;
    log(`columnar index: the rows after id ${afterId} put in time order in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  } catch (error) {
    await rewriter.run('ROLLBACK').catch(() => {});
    log(`columnar index: not put in time order (${(error as Error).message}); trying again after the next large catch-up or opening`);
    endIfInvalidated(error as Error);
    return;
  }
  // The rows rewritten wait in the write-ahead log as rows appended do.
  uncheckpointedRows += watermark - afterId;
  await checkpoint(1, rewriter);
}

/**
 * Writes what the index holds only in memory and its write-ahead log (the rows appended last)
 * to its file, so that their memory can go. It fails while a question runs: it is tried `tries`
 * times, CHECKPOINT_AGAIN_MS apart, then again after the next catch-up, a second later at most.
 * (FORCE CHECKPOINT would hold every new question back until those running had ended.)
 */
async function checkpoint(tries = 1, connection = writer): Promise<void> {
  for (let tried = 1; ; tried++) {
    try {
      await connection.run('CHECKPOINT');
      uncheckpointedRows = 0;
      return;
    } catch (error) {
      if (tried >= tries || closing) {
        log(`columnar index: not checkpointed (${(error as Error).message}); trying again after the next catch-up`);
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_AGAIN_MS));
  }
}

/**
 * Appends the rows as they come to a temporary table, then indexes them there with
 * DuckDB's own statements (indexingStatements), which parse each row's document: one JavaScript
 * call per value read, not per column indexed.
 */
async function appendInOneTransaction(rows: unknown[][]): Promise<void> {
  await writer.run('BEGIN TRANSACTION');
  try {
    const incoming = await writer.createAppender(INCOMING_TABLE, 'main', 'temp');
    for (const row of rows) {
      incoming.appendBigInt(BigInt(row[0] as number));
      incoming.appendBigInt(BigInt(row[1] as number));
      let at = 2;
      for (const append of appendRowColumns) append(incoming, row[at++]);
      incoming.appendVarchar(row[at] as string);
      incoming.endRow();
    }
    incoming.closeSync();
    for (const statement of indexing) await statement.run();
    await writer.run('COMMIT');
  } catch (error) {
    await writer.run('ROLLBACK').catch(() => {});
    throw error;
  }
}

function appenderOf(column: FilterColumn): (appender: DuckDBAppender, value: unknown) => void {
  const append = {
    integer: (appender: DuckDBAppender, value: unknown) => appender.appendBigInt(BigInt(value as number)),
    timestamp: (appender: DuckDBAppender, value: unknown) => appender.appendBigInt(BigInt(value as number)),
    boolean: (appender: DuckDBAppender, value: unknown) => appender.appendTinyInt(Number(value)),
    number: (appender: DuckDBAppender, value: unknown) => appender.appendDouble(Number(value)),
    string: (appender: DuckDBAppender, value: unknown) => appender.appendVarchar(String(value)),
    stringArray: () => {
      throw new Error('array columns have tables of their own');
    },
  }[column.type];
  return (appender, value) => (value === null || value === undefined ? appender.appendNull() : append(appender, value));
}

/**
 * The number of the account's rows up to id `upTo` matching `filters` and the ids of page
 * `page`. Counts and full pages stay cached across appends (AppendOnlyAnswers): only rows above
 * the id they were counted up to are counted anew.
 */
async function page(rowsOf: RowsOf, accountId: number, upTo: number, filters: Filter[], page: number): Promise<PageOfIds> {
  const key = `${accountId}:${filterKey(filters)}`;
  const count = async (above: number): Promise<number> => Number((await rowsOf(countQuery(table, accountId, filters, above, upTo)))[0]![0]);

  let total = await answers.count(key, upTo, count);
  const cachedIds = answers.page(key, page, upTo);
  if (cachedIds) return { total: total ?? (await answers.recount(key, upTo, count)), ids: cachedIds };
  if (total === undefined && page <= COUNTED_PAGES) {
    // One scan gives the count and the page.
    const [counted, smallest] = (await rowsOf(countAndPagesQuery(table, accountId, filters, upTo, page)))[0]!;
    total = Number(counted);
    answers.remember(key, total, upTo);
    const ids = ((smallest as { items?: unknown[] } | null)?.items ?? []).map(Number).slice((page - 1) * PAGE_SIZE);
    answers.rememberPage(key, page, ids, PAGE_SIZE, upTo);
    return { total, ids };
  }
  total ??= await answers.recount(key, upTo, count);
  if ((page - 1) * PAGE_SIZE >= total) return { total, ids: [] };
  // From the end of the page before when it is known, else by offset.
  const before = answers.page(key, page - 1, upTo);
  const ids = (await rowsOf(pageQuery(table, accountId, filters, upTo, page, before?.at(-1)))).map((row) => Number(row[0]));
  answers.rememberPage(key, page, ids, PAGE_SIZE, upTo);
  return { total, ids };
}

/**
 * The watermark to answer a question of a page or a summary at, and the account's rows above it
 * that the index does not hold yet: with them, every one of its rows up to id `newestId` at
 * least. When more rows than MAX_UNINDEXED_ROWS lie above the watermark (an import), only the
 * account's own are read; if they are many too (its own import), they are waited for as the
 * index appends them. So one account's import holds nobody else's questions up.
 */
async function unindexedFor(accountId: number, newestId: number): Promise<{ upTo: number; newer: UnindexedRow[] }> {
  // Every row up to unindexedUpTo is in the index or kept in unindexed.
  const covered = () => newestId <= Math.max(watermark, unindexedUpTo);
  if (!covered() && watermark >= crowdedUpTo) await readingUnindexed.run();
  dropIndexed();
  if (!covered()) return accountRowsAbove(accountId);
  return { upTo: watermark, newer: unindexed.filter((row) => row.accountId === accountId) };
}

/**
 * Reads the source's rows above those read before, unless more than MAX_UNINDEXED_ROWS lie above
 * the watermark (an import): then it keeps none of them, and notes how far they reach.
 */
async function readUnindexed(): Promise<void> {
  dropIndexed();
  const room = MAX_UNINDEXED_ROWS - unindexed.length;
  const read = room > 0 ? await source.rowsAfter(unindexedUpTo, room + 1) : [];
  if (room <= 0 || read.length > room) {
    crowdedUpTo = Math.max(crowdedUpTo, unindexedUpTo, Number(read.at(-1)?.[0] ?? 0));
    return;
  }
  // A catch-up meanwhile may have moved the rows kept past some of these.
  for (const row of read) if (Number(row[0]) > unindexedUpTo) unindexed.push(unindexedRowOf(row, columns, hashed, sourceLayout));
  unindexedUpTo = Math.max(unindexedUpTo, Number(read.at(-1)?.[0] ?? 0));
}

/**
 * The account's own rows above the watermark, read through an index of the account, and the
 * watermark they were read above. More than MAX_ACCOUNT_ROWS_ABOVE (the account's own import)
 * are waited for as the index appends them.
 */
async function accountRowsAbove(accountId: number): Promise<{ upTo: number; newer: UnindexedRow[] }> {
  // The index's answer counts its rows up to here; a catch-up meanwhile appends some of these beyond it.
  const upTo = watermark;
  const rows = await source.accountRowsAfter(accountId, upTo, MAX_ACCOUNT_ROWS_ABOVE + 1);
  if (rows.length <= MAX_ACCOUNT_ROWS_ABOVE) return { upTo, newer: rows.map((row) => unindexedRowOf(row, columns, hashed, sourceLayout)) };
  await catchUp();
  dropIndexed();
  return { upTo: watermark, newer: unindexed.filter((row) => row.accountId === accountId) };
}

/** Forgets the rows read above the watermark that the index now holds. */
function dropIndexed(): void {
  if (unindexedUpTo <= watermark) {
    unindexed = [];
    unindexedUpTo = watermark;
    return;
  }
  const firstNewer = unindexed.findIndex((row) => row.id > watermark);
  if (firstNewer > 0) unindexed = unindexed.slice(firstNewer);
}

/**
 * Page `page` of the account's rows matching `filters`: those of the index up to `upTo`, then
 * `newer`, the rows above it that the index does not hold yet (ids only ever rise).
 */
async function pageWithNewer(
  rowsOf: RowsOf,
  accountId: number,
  upTo: number,
  newer: UnindexedRow[],
  filters: Filter[],
  pageNumber: number,
): Promise<PageOfIds> {
  const indexed = await page(rowsOf, accountId, upTo, filters, pageNumber);
  if (newer.length === 0) return indexed;
  const matches = rowMatcher(filters);
  const newerIds = newer.filter(matches).map((row) => row.id);
  const skipNewer = Math.max(0, (pageNumber - 1) * PAGE_SIZE - indexed.total);
  const ids = [...indexed.ids, ...newerIds.slice(skipNewer, skipNewer + PAGE_SIZE - indexed.ids.length)];
  return { total: indexed.total + newerIds.length, ids };
}

/** The rows an export's batch reads: the index's up to `indexedUpTo`, then `newer`, the account's rows above it; all up to `upTo`. */
interface ExportRows {
  upTo: number;
  indexedUpTo: number;
  newer: UnindexedRow[];
}

/**
 * The rows of an export's batch: up to `upTo`, or for its first batch, up to an id past every one
 * of the account's rows up to `newestId`. Those above the watermark are the account's own, read
 * while other accounts' rows crowd it (accountRowsAbove); else the index catches up with them.
 */
async function exportRows(accountId: number, newestId: number, upTo: number | undefined): Promise<ExportRows> {
  if ((upTo ?? newestId) <= watermark) return { upTo: upTo ?? watermark, indexedUpTo: watermark, newer: [] };
  if (watermark >= crowdedUpTo) await readingUnindexed.run();
  if (watermark >= crowdedUpTo) {
    await catchUp();
    return { upTo: upTo ?? watermark, indexedUpTo: watermark, newer: [] };
  }
  const above = await accountRowsAbove(accountId);
  return { upTo: upTo ?? Math.max(above.upTo, above.newer.at(-1)?.id ?? 0), indexedUpTo: above.upTo, newer: above.newer };
}

/**
 * The sums of the account's rows matching `filters`, by the keys of `groupBy` (none: one group of
 * all): those of the index up to id `upTo`, and `newer`, the rows above it that the index does not
 * hold yet.
 */
async function summary(
  rowsOf: RowsOf,
  accountId: number,
  upTo: number,
  newer: UnindexedRow[],
  filters: Filter[],
  groupBy: string[],
  timeZone: string,
): Promise<SummaryRows> {
  const keys = groupBy.map((name): GroupKey => {
    if ((TIME_BUCKETS as readonly string[]).includes(name)) return { bucket: name as TimeBucket };
    const column = columns.find((candidate) => candidate.name === name);
    if (!column) throw new Error(`the index has no column ${name}`);
    return { column };
  });
  const beyond = newer.filter(rowMatcher(filters));
  const localTime = keys.some((key) => 'bucket' in key) ? await localTimeOver(rowsOf, accountId, upTo, beyond, timeZone) : NO_LOCAL_TIME;
  // Money that is not whole cents (rare) is summed apart, exactly, where the account has any.
  const withFix = beyond.some(notWholeCentsBeyond) || !(await wholeCentsOnly(rowsOf, accountId, upTo));
  const queries = summaryQueries(table, accountId, filters, upTo, keys, localTime, beyond, withFix);
  const run = async (query: DuckDbQuery) => (await rowsOf(query)).map((row) => row.map(plain));
  const totalsRow = async () => {
    // Totals with rows beyond the watermark are not kept: those rows are indexed soon. Their
    // parts follow withFix, which an account's money found not whole cents later turns on.
    const key = beyond.length === 0 ? `${accountId}:${filterKey(filters)}:${upTo}:${queries.totalsInGroups}:${withFix}` : undefined;
    const known = key === undefined ? undefined : totalsFound.get(key);
    if (known) return known;
    const row = (await run(queries.totals))[0]!;
    if (key !== undefined) totalsFound.set(key, row);
    return row;
  };
  if (queries.totalsInGroups) {
    const groups = await run(queries.groups);
    const [buyers] = await totalsRow();
    return summaryMeasures(totalsFromGroups(groups, buyers as number, withFix), keys.length, withFix);
  }
  const totals = await totalsRow();
  return summaryMeasures({ groups: keys.length === 0 ? [totals] : await run(queries.groups), totals }, keys.length, withFix);
}

/**
 * Local time in `timeZone` over the account's rows up to `upTo` and `beyond` (rows above it): the
 * zone's offsets from UTC in the windows of time the rows lie in, and the span from the first
 * window to the last.
 */
async function localTimeOver(rowsOf: RowsOf, accountId: number, upTo: number, beyond: UnindexedRow[], timeZone: string): Promise<LocalTime> {
  const indexed = await windowsOf(rowsOf, accountId, upTo);
  const beyondWindows = beyond.map((row) => Math.floor((row.values.created_at as number) / WINDOW_SECONDS));
  const known = beyondWindows.length === 0 ? indexed : [...new Set([...indexed, ...beyondWindows])].sort((a, b) => a - b);
  const windows = known.length > 0 ? known : [Math.floor(Date.now() / 1000 / WINDOW_SECONDS)];
  const key = `${timeZone} ${windows.join(' ')}`;
  let offsets = offsetsFound.get(key);
  if (!offsets) {
    offsets = offsetSpansOver(timeZone, windows);
    offsetsFound.set(key, offsets);
  }
  return { offsets, from: windows[0]! * WINDOW_SECONDS, to: (windows.at(-1)! + 1) * WINDOW_SECONDS };
}

/** The windows of time of the account's rows up to `upTo`: those of the rows above the ids read before, added to what they gave. */
async function windowsOf(rowsOf: RowsOf, accountId: number, upTo: number): Promise<number[]> {
  const known = createdAtWindows.get(accountId);
  if (known && known.upTo >= upTo) return known.windows;
  const found = (await rowsOf(createdAtWindowsQuery(table, accountId, known?.upTo ?? 0, upTo))).map((row) => Number(row[0]));
  const windows = [...new Set([...(known?.windows ?? []), ...found])].sort((a, b) => a - b);
  createdAtWindows.set(accountId, { windows, upTo });
  return windows;
}

/** Whether every money value of the account's rows up to `upTo` is whole cents: those of the rows above the ids read before looked at. */
async function wholeCentsOnly(rowsOf: RowsOf, accountId: number, upTo: number): Promise<boolean> {
  const known = wholeCents.get(accountId);
  if (known && (!known.whole || known.upTo >= upTo)) return known.whole;
  const whole = (await rowsOf(notWholeCentsQuery(table, accountId, known?.upTo ?? 0, upTo))).length === 0;
  wholeCents.set(accountId, { upTo, whole });
  return whole;
}

/** The next `limit` ids after `afterId` of the export's rows matching `filters`: the index's, then the newer ones. */
async function idsAfter(
  firstColumnOf: FirstColumnOf,
  accountId: number,
  rows: ExportRows,
  filters: Filter[],
  afterId: number,
  limit: number,
): Promise<BatchOfIds> {
  const { upTo, newer } = rows;
  const indexedUpTo = Math.min(upTo, rows.indexedUpTo);
  const ids = (await firstColumnOf(idsAfterQuery(table, accountId, filters, indexedUpTo, afterId, limit))).map(Number);
  const matches = rowMatcher(filters);
  for (const row of newer) {
    if (ids.length === limit) break;
    if (row.id > Math.max(afterId, indexedUpTo) && row.id <= upTo && matches(row)) ids.push(row.id);
  }
  return { ids, upTo };
}

const [MIN_SAFE, MAX_SAFE] = [BigInt(Number.MIN_SAFE_INTEGER), BigInt(Number.MAX_SAFE_INTEGER)];
/** A DuckDB value as JSON has it: counts and integers arrive as bigint, and stay text beyond a number's exact integers (sums of money's ranks). */
function plain(value: unknown): string | number | null {
  if (typeof value === 'bigint') return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
  if (value === null || typeof value === 'number' || typeof value === 'string') return value;
  return String(value);
}

async function close(): Promise<void> {
  closing = true;
  clearInterval(poll);
  // No statement begins once closing; those running stop.
  for (const questionId of new Set(questionOn.values())) interruptWhileRunning(questionId);
  // A rewrite in time order under way stops too: its rows stay recorded as waiting, and are put in order at the next opening.
  if (reordering) {
    const interrupting = setInterval(() => rewriter.interrupt(), INTERRUPT_AGAIN_MS);
    rewriter.interrupt();
    await reordering.finally(() => clearInterval(interrupting));
  }
  await catchingUp.settled();
  await readingUnindexed.settled();
  await Promise.allSettled(beingAnswered.values());
  for (const reader of readers) reader.closeSync();
  rewriter.closeSync();
  writer.closeSync();
  instance.closeSync();
  await source.close();
}

/**
 * `work` run one at a time, so that the promise of a call is of a run that starts after the
 * call: a caller sees every row committed before it called. Calls made during a run share the
 * next one.
 */
function coalesced(work: () => Promise<void>): { run: () => Promise<void>; settled: () => Promise<void> } {
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const run = (): Promise<void> => {
    if (!running) {
      running = work().finally(() => {
        running = undefined;
      });
      return running;
    }
    queued ??= running
      .catch(() => {})
      .then(() => {
        queued = undefined;
        return run();
      });
    return queued;
  };
  return { run, settled: async () => (queued ?? running)?.catch(() => {}) };
}
