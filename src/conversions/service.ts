import type { Database } from '../db/database.js';
import type { ListPage } from '../filters/list.js';
import { ListCache } from '../filters/list-cache.js';
import { parseListQuery } from '../filters/parse.js';
import { ConversionRepository } from './repository.js';
import { withId } from './entry-json.js';
import { conversionCatalogue } from './schema.js';

export class ConversionService {
  private readonly conversions: ConversionRepository;
  private readonly lists = new ListCache();

  constructor(private readonly database: Database) {
    this.conversions = new ConversionRepository(database.db);
  }

  /**
   * One page of the account's conversions matching the query string's filters, with each entry
   * as JSON text (ConversionEntry).
   */
  async list(accountId: number, dataVersion: number, query: Record<string, string | string[] | undefined>): Promise<ListPage<string>> {
    const listQuery = parseListQuery(query, conversionCatalogue);
    const cached = this.lists.lookup('conversions', accountId, dataVersion, listQuery);
    const list = { accountId, query: listQuery, ...cached, unindexed: this.database.unindexed };
    const page = await this.conversions.listJson(list);
    return { ...page, entries: page.entries.map((entry) => withId(entry.id, entry.entry_json)) };
  }
}
