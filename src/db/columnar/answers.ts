import { LRUCache } from 'lru-cache';

/**
 * Counts and pages of an append-only table that stay exact as rows arrive: rows come only with
 * ids above every earlier one, so what was counted up to an id stays counted and only rows above
 * it need counting; and a full page, once found, never changes (later rows come after it), while
 * a page with room left holds until a row arrives. The keys say which account and filters;
 * bounded, least recently used first out.
 */
export class AppendOnlyAnswers {
  private readonly counts: LRUCache<string, { count: number; upTo: number }>;
  private readonly pages: LRUCache<string, { ids: number[]; upTo: number }>;

  constructor(maxCounts = 10_000, maxPages = 5_000) {
    this.counts = new LRUCache({ max: maxCounts });
    this.pages = new LRUCache({ max: maxPages });
  }

  /**
   * The count of `key` up to id `upTo` from the one known, topped up by `countAbove` (the
   * matching rows with ids above its argument, up to `upTo`); undefined when none is known.
   */
  async count(key: string, upTo: number, countAbove: (above: number) => Promise<number>): Promise<number | undefined> {
    const known = this.counts.get(key);
    if (!known || known.upTo > upTo) return undefined;
    if (known.upTo === upTo) return known.count;
    const count = known.count + (await countAbove(known.upTo));
    this.remember(key, count, upTo);
    return count;
  }

  /** Counts `key` from the first row and remembers it. */
  async recount(key: string, upTo: number, countAbove: (above: number) => Promise<number>): Promise<number> {
    const count = await countAbove(0);
    this.remember(key, count, upTo);
    return count;
  }

  remember(key: string, count: number, upTo: number): void {
    const known = this.counts.peek(key);
    if (known && known.upTo >= upTo) return;
    this.counts.set(key, { count, upTo });
  }

  /** The ids of a page found before that still hold up to id `upTo`. */
  page(key: string, page: number, upTo: number): number[] | undefined {
    const known = this.pages.get(`${key}#${page}`);
    return known && (known.upTo === Infinity || known.upTo === upTo) ? known.ids : undefined;
  }

  /** Remembers a page found up to id `upTo`: for good if it is full, else until a row arrives. */
  rememberPage(key: string, page: number, ids: number[], pageSize: number, upTo: number): void {
    this.pages.set(`${key}#${page}`, { ids, upTo: ids.length === pageSize ? Infinity : upTo });
  }

  clear(): void {
    this.counts.clear();
    this.pages.clear();
  }
}
