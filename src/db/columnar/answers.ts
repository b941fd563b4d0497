/**
 * Counts and pages of an append-only table that stay exact as rows arrive: rows come only with
 * ids above every earlier one, so what was counted up to an id stays counted and only rows above
 * it need counting; and a full page, once found, never changes (later rows come after it), while
 * a page with room left holds until a row arrives. The keys say which account and filters;
 * bounded, least recently used first out.
 */
export class AppendOnlyAnswers {
  private readonly counts = new Map<string, { count: number; upTo: number }>();
  private readonly pages = new Map<string, { ids: number[]; upTo: number }>();

  constructor(
    private readonly maxCounts = 10_000,
    private readonly maxPages = 5_000,
  ) {}

  /**
   * The count of `key` up to id `upTo` from the one known, topped up by `countAbove` (the
   * matching rows with ids above its argument, up to `upTo`); undefined when none is known.
   */
  async count(key: string, upTo: number, countAbove: (above: number) => Promise<number>): Promise<number | undefined> {
    const known = touch(this.counts, key);
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
    const known = this.counts.get(key);
    if (known && known.upTo >= upTo) return;
    remember(this.counts, key, { count, upTo }, this.maxCounts);
  }

  /** The ids of a page found before that still hold up to id `upTo`. */
  page(key: string, page: number, upTo: number): number[] | undefined {
    const known = touch(this.pages, `${key}#${page}`);
    return known && (known.upTo === Infinity || known.upTo === upTo) ? known.ids : undefined;
  }

  /** Remembers a page found up to id `upTo`: for good if it is full, else until a row arrives. */
  rememberPage(key: string, page: number, ids: number[], pageSize: number, upTo: number): void {
    remember(this.pages, `${key}#${page}`, { ids, upTo: ids.length === pageSize ? Infinity : upTo }, this.maxPages);
  }

  clear(): void {
    this.counts.clear();
    this.pages.clear();
  }
}

function touch<Value>(map: Map<string, Value>, key: string): Value | undefined {
  const value = map.get(key);
  if (value !== undefined) {
    map.delete(key);
    map.set(key, value);
  }
  return value;
}

function remember<Value>(map: Map<string, Value>, key: string, value: Value, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}
