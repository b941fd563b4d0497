import type { Database } from '../db/database.js';
import type { PreparedList } from '../filters/list.js';
import { ListCache, listETag } from '../filters/list-cache.js';
import { parseListQuery } from '../filters/parse.js';
import { ConversionRepository } from './repository.js';
import { withId } from './entry-json.js';
import { conversionCatalogue } from './schema.js';

export class ConversionService {
  private readonly conversions: ConversionRepository;
  private readonly lists = new ListCache();

  constructor(private readonly database: Database) {
    // Lists are the questions a client can make long: they run apart from the service's other work.
    this.conversions = new ConversionRepository(database.questions);
  }

  /**
   * One page of the account's conversions matching the query string's filters, with each entry
   * as JSON text (ConversionEntry). The query is checked at once; `read` reads the page.
   */
  list(accountId: number, dataVersion: number, query: Record<string, string | string[] | undefined>): PreparedList<string> {
    const listQuery = parseListQuery(query, conversionCatalogue);
    return {
      etag: listETag('conversions', accountId, dataVersion, listQuery),
      read: async () => {
        const cached = this.lists.lookup('conversions', accountId, dataVersion, listQuery);
        const page = await this.conversions.listJson({ accountId, query: listQuery, ...cached, planner: this.database });
        return { ...page, entries: page.entries.map((entry) => withId(entry.id, entry.entry_json)) };
      },
    };
  }
}
