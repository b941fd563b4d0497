import { createHash } from 'node:crypto';
import type { Filter, ListQuery } from './parse.js';
import { LRUCache } from 'lru-cache';

/**
 * What listing has learnt about one filter of one account while the account's data version
 * held: the exact number of matching rows, and the first id of pages already served, so that
 * a deep page seeks by id instead of stepping over every earlier row with OFFSET.
 */
export class FilterFacts {
  total: number | undefined;
  private readonly pageStarts = new Map<number, number>();

  constructor(private readonly maxPages: number) {}

  /** The known page nearest at or before `page`, with its first id. */
  nearestStart(page: number): { page: number; firstId: number } | undefined {
    const exact = this.pageStarts.get(page);
    if (exact !== undefined) return { page, firstId: exact };
    let nearest: { page: number; firstId: number } | undefined;
    for (const [known, firstId] of this.pageStarts) {
      if (known < page && (!nearest || known > nearest.page)) nearest = { page: known, firstId };
    }
    return nearest;
  }

  /** Records where a served page starts, and where the next one does when it was full. */
  learnPage(page: number, ids: number[], pageSize: number): void {
    if (ids.length === 0) return;
    this.remember(page, ids[0]!);
    // Ids are integers: the next page starts at the first matching id above this page's last.
    if (ids.length === pageSize) this.remember(page + 1, ids[ids.length - 1]! + 1);
  }

  private remember(page: number, firstId: number): void {
    if (this.pageStarts.size < this.maxPages || this.pageStarts.has(page)) this.pageStarts.set(page, firstId);
  }
}

/**
 * Facts per (account, filter), kept exact by the account's data version: a write increments
 * it, and facts learnt under an older version are never used again. Bounded, least recently
 * used first out; a process-local cache, which is safe beside other instances because the
 * version lives in the database.
 */
export class ListCache {
  private readonly entries: LRUCache<string, { version: number; facts: FilterFacts }>;

  constructor(
    maxFilters = 1000,
    private readonly maxPagesPerFilter = 1000,
  ) {
    this.entries = new LRUCache({ max: maxFilters });
  }

  /** What earlier requests learnt about the query's filters under this data version of the account. */
  lookup(scope: string, accountId: number, version: number, query: ListQuery): FilterFacts {
    return this.facts(`${scope}:${accountId}:${filterKey(query.filters)}`, version);
  }

  private facts(key: string, version: number): FilterFacts {
    const found = this.entries.get(key);
    // A request that read an older version than the cached one works on its own, unshared facts.
    if (found && found.version > version) return new FilterFacts(this.maxPagesPerFilter);
    if (found && found.version === version) return found.facts;
    const entry = { version, facts: new FilterFacts(this.maxPagesPerFilter) };
    this.entries.set(key, entry);
    return entry.facts;
  }
}

// Bump when a list's bytes change for the same data, or what its version counts changes (2:
// conversions by their newest id), so that no client keeps an old page as current.
const LIST_FORMAT = 2;

/**
 * The entity tag of a list page. Its bytes follow from the account, a version that every write
 * of the list's rows changes (the account's data version; for conversions, their newest id), the filters, the page and what the caller adds (such as the origin
 * that asset URLs are built on), so the tag is known before any row is read.
 */
export function listETag(scope: string, accountId: number, version: number, query: ListQuery, ...representation: string[]): string {
  const parts = [LIST_FORMAT, scope, accountId, version, filterKey(query.filters), query.page, ...representation];
  return `"${createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 27)}"`;
}

/** The same filters give the same key whatever their order in the query string. */
export function filterKey(filters: Filter[]): string {
  return filters
    .map(({ column, condition }) => JSON.stringify([column.name, condition]))
    .sort()
    .join('&');
}
