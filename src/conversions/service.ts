import type { Database } from '../db/database.js';
import { PAGE_SIZE, type PreparedList } from '../filters/list.js';
import { listETag } from '../filters/list-cache.js';
import { parseListQuery, type RawQuery } from '../filters/parse.js';
import type { ConversionQuestions, ConversionsAsOf } from './questions.js';
import { ConversionRepository } from './repository.js';
import { conversionCatalogue } from './schema.js';
import { type ConversionSummary, parseSummaryQuery, summaryOf } from './summary.js';
import { type ExportFormat, exportChunks, parseExportQuery } from './export.js';

/** What answers questions about conversions: the number matching, the ids of a page, sums by group (questions.ts). */
type Questions = Pick<ConversionQuestions, 'page' | 'summary' | 'idsAfter'>;

export class ConversionService {
  private readonly conversions: ConversionRepository;

  constructor(
    database: Database,
    private readonly questions: Questions,
  ) {
    this.conversions = new ConversionRepository(database.db, database);
  }

  /**
   * One page of the account's conversions matching the query string's filters, its entries as
   * JSON text (ConversionEntry). The query is checked at once; `read` reads the page: its ids
   * from the columnar index, their entries from the rows.
   */
  list(asOf: ConversionsAsOf, query: RawQuery): PreparedList {
    const listQuery = parseListQuery(query, conversionCatalogue);
    const { accountId } = asOf;
    return {
      etag: listETag('conversions', accountId, asOf.newestId, listQuery),
      read: async () => {
        const { total, ids } = await this.questions.page(asOf, listQuery.filters, listQuery.page);
        const entries = await this.conversions.pageJsonByIds(accountId, ids);
        if (entries.found !== ids.length)
          throw new Error(`the columnar index listed ${ids.length} conversions of account ${accountId}, the database holds ${entries.found} of them`);
        return {
          entriesJson: entries.json,
          totalEntries: total,
          page: listQuery.page,
          totalPages: Math.ceil(total / PAGE_SIZE),
        };
      },
    };
  }

  /**
   * The sums of the account's conversions matching the query string's filters, by its group_by
   * keys (time buckets in its tz, or columns): exact, and consistent with the list's
   * totalEntries for the same filters.
   */
  async summary(asOf: ConversionsAsOf, query: RawQuery): Promise<ConversionSummary> {
    const { filters, groupBy, timeZone } = parseSummaryQuery(query);
    return summaryOf(await this.questions.summary(asOf, filters, groupBy, timeZone), groupBy);
  }

  /**
   * Every conversion of the account matching the query string's filters, in id order, as NDJSON
   * (each line the list's entry) or CSV: the format from `format`, else from `accept`. The query
   * is checked at once; `chunks` reads the text a batch at a time as it is consumed.
   */
  export(asOf: ConversionsAsOf, query: RawQuery, accept: string | undefined): { format: ExportFormat; chunks: () => AsyncGenerator<Uint8Array | string> } {
    const { filters, format } = parseExportQuery(query, accept);
    const source = {
      idsAfter: (afterId: number, upTo: number | undefined, limit: number) => this.questions.idsAfter(asOf, filters, afterId, upTo, limit),
      entriesByIds: (ids: number[]) => this.conversions.entriesByIds(asOf.accountId, ids),
      ndjsonByIds: (ids: number[]) => this.conversions.ndjsonByIds(asOf.accountId, ids),
    };
    return { format, chunks: () => exportChunks(source, format) };
  }
}
