import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import type { ListPage } from '../filters/list.js';
import { parseListQuery } from '../filters/parse.js';
import { ConversionRepository } from './repository.js';
import { conversionCatalogue, type ConversionEntry } from './schema.js';

export class ConversionService {
  private readonly conversions: ConversionRepository;

  constructor(db: Kysely<DatabaseSchema>) {
    this.conversions = new ConversionRepository(db);
  }

  /** One page of the account's conversions matching the query string's filters. */
  list(accountId: number, query: Record<string, string | string[] | undefined>): Promise<ListPage<ConversionEntry>> {
    return this.conversions.list(accountId, parseListQuery(query, conversionCatalogue));
  }
}
