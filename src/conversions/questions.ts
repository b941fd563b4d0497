import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.js';
import { type BatchOfIds, ColumnarIndex, type PageOfIds, type SummaryRows } from '../db/columnar/columnar-index.js';
import type { Database } from '../db/database.js';
import { filterKey } from '../filters/list-cache.js';
import type { Filter } from '../filters/parse.js';
import { ConversionRepository } from './repository.js';
import { conversionCatalogue } from './schema.js';

// How often the index looks for new rows; a question after a write reads or waits for those written before it.
const POLL_MS = 1000;
// Nicer than the service: catching up after a large import yields the processor to requests.
const NICENESS = 10;

/**
 * What the columnar index of conversions holds: the filterable columns (all but `created_at`
 * read from each row's entry), and the e-mail address as a hash (a summary counts distinct buyers).
 */
export const CONVERSION_INDEX_LAYOUT = {
  table: 'conversions',
  columns: [...conversionCatalogue.values()].filter((column) => column.name !== 'id'),
  hashed: ['email'],
  // The row keeps its time as epoch seconds; every other column is read from its entry.
  sourceLayout: { rowColumns: ['created_at'], document: 'entry_json' },
};

/** The columns of a conversion the index reads from its source, after its id and account. */
export const CONVERSION_SOURCE_COLUMNS = [...CONVERSION_INDEX_LAYOUT.sourceLayout.rowColumns, CONVERSION_INDEX_LAYOUT.sourceLayout.document];

/**
 * An account's conversions as a request finds them: an id none of them lies above
 * (conversion_versions.newest_id), which every write of the account's conversions raises and
 * nothing else changes. Answers hold every conversion up to that id at least.
 */
export interface ConversionsAsOf {
  accountId: number;
  newestId: number;
}

/**
 * What answers questions about conversions: the columnar index, but for one buyer's page (one
 * filter, naming one `user_id`), which landing pages ask all day: the row store finds those few
 * rows through its own index, exact at once, without crossing to the index's process.
 */
export class ConversionQuestions {
  readonly opened: Promise<boolean>;
  /**
   * Pages asked under an account's newest conversion id: the same question under the same id has
   * the same answer, so a repeated one is answered here, without crossing to the index's
   * process, which runs at a lower priority and would wait for the processor behind the
   * requests themselves. A write of conversions raises the id (asset writes leave it), and the
   * process's own caches, which appends keep valid, answer the next one.
   */
  private readonly pages = new LRUCache<string, Promise<PageOfIds>>({ max: 2_000 });

  constructor(
    private readonly index: ColumnarIndex,
    private readonly rows: ConversionRepository,
  ) {
    this.opened = index.opened;
  }

  /** The rows of the account matching `filters`, exact as of `asOf` at least. */
  page({ accountId, newestId }: ConversionsAsOf, filters: Filter[], page: number): Promise<PageOfIds> {
    const key = `${accountId}:${newestId}:${page}:${filterKey(filters)}`;
    const known = this.pages.get(key);
    if (known) return known;
    const buyer = buyerAsked(filters);
    const answer = buyer !== undefined ? this.rows.buyerPage(accountId, buyer, page) : this.index.page(accountId, newestId, filters, page);
    this.pages.set(key, answer);
    // A failed question is asked again next time.
    answer.catch(() => this.pages.peek(key) === answer && this.pages.delete(key));
    return answer;
  }

  /** The sums of the account's rows matching `filters` by `groupBy`, exact as of `asOf` at least (ColumnarIndex.summary). */
  summary({ accountId, newestId }: ConversionsAsOf, filters: Filter[], groupBy: string[], timeZone: string): Promise<SummaryRows> {
    return this.index.summary(accountId, newestId, filters, groupBy, timeZone);
  }

  /** The next ids of an export (ColumnarIndex.idsAfter); its first batch exact as of `asOf` at least. */
  idsAfter({ accountId, newestId }: ConversionsAsOf, filters: Filter[], afterId: number, upTo: number | undefined, limit: number): Promise<BatchOfIds> {
    return this.index.idsAfter(accountId, newestId, filters, afterId, upTo, limit);
  }

  status: ColumnarIndex['status'] = () => this.index.status();
  close = () => this.index.close();
}

/** The buyer a question asks for when its one filter is `user_id=` a value (`user_id=u42`). */
function buyerAsked(filters: Filter[]): string | undefined {
  if (filters.length !== 1) return undefined;
  const [{ column, condition }] = filters as [Filter];
  if (column.name !== 'user_id' || condition.kind !== 'compare' || condition.op !== '=' || typeof condition.value !== 'string') return undefined;
  return condition.value;
}

/**
 * The questions about conversions: the columnar index on the embedded default a DuckDB file
 * beside the SQLite files, kept across restarts; with PostgreSQL one of this instance's own,
 * built at start, so that instances stay disposable.
 */
export function openConversionQuestions(config: Config, database: Database, log: (message: string) => void): ConversionQuestions {
  const index = new ColumnarIndex(
    {
      file: database.engine === 'sqlite' ? path.join(config.dataDir, 'conversions.duckdb') : undefined,
      source: database.conversionSource,
      ...CONVERSION_INDEX_LAYOUT,
      memoryLimit: `${config.columnar.memoryMiB}MB`,
      threads: config.columnar.threads,
      pollMs: POLL_MS,
      niceness: NICENESS,
      // A question is waited for as long as a database statement of a request may run.
      questionTimeoutMs: config.requestStatementTimeoutMs,
    },
    log,
  );
  return new ConversionQuestions(index, new ConversionRepository(database.db, database));
}
