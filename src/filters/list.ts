import type { Expression, Kysely, SelectQueryBuilder } from 'kysely';
import type { FilterFacts } from './list-cache.js';
import type { ListQuery } from './parse.js';
import { filtersToSql } from './sql.js';

export const PAGE_SIZE = 100;

/** The list envelope of interface 2.1. */
export interface ListPage<Entry> {
  entries: Entry[];
  totalEntries: number;
  page: number;
  totalPages: number;
}

/** A checked list request: its entity tag is known before any row is read (listETag). */
export interface PreparedList<Entry> {
  etag: string;
  read(): Promise<ListPage<Entry>>;
}

export interface ListRequest {
  db: Kysely<any>;
  table: string;
  accountId: number;
  query: ListQuery;
  /** What earlier requests learnt about these filters under the same data version. */
  facts: FilterFacts;
  /** The same for the account's unfiltered list: its total tells how selective the filters are. */
  everything: FilterFacts;
  /** The adapter's way to keep a condition from choosing an index (Database.unindexed). */
  unindexed: (ref: string) => Expression<unknown>;
}

/** A list request as a service hands it to a repository, which adds its database and table. */
export type AccountList = Omit<ListRequest, 'db' | 'table'>;

// Reading a row through a filter's index, then sorting by id, costs about this many rows read
// in id order: it decides between the two ways of finding a page.
const INDEX_READ_COST = 4;
// Walking the table itself in id order reads rows about three times faster than walking the
// account's (account_id, id) index and looking each row up; it pays when at least this share
// of the ids in the account's span are its own (always, with one account).
const TABLE_WALK_MIN_DENSITY = 0.5;

/**
 * Reads one page of an account's rows in ascending id order, with the exact number of rows
 * matching the filters. The count is taken from `facts` when known. A page starts from the
 * nearest page boundary known, by id, instead of an OFFSET from the first row. When the
 * filters match many rows, the page walks the account's rows in id order and stops after
 * 100 matches, rather than collecting every match through a filter's index and sorting them;
 * it walks the table itself when the account owns most of the rows in its span of ids.
 * `select` picks what a row returns (all its columns by default); it must include the id.
 */
export async function listRows<Row extends { id: number }>(
  request: ListRequest,
  select: (rows: SelectQueryBuilder<any, any, {}>) => SelectQueryBuilder<any, any, any> = (rows) => rows.selectAll(request.table),
): Promise<ListPage<Row>> {
  const { db, table, accountId, query, facts, everything } = request;
  const all = db.selectFrom(table).where(`${table}.account_id`, '=', accountId);
  const count = async (rows: typeof all) => Number((await rows.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count);
  const idAt = async (end: 'min' | 'max') => Number((await all.select((eb) => eb.fn[end](`${table}.id`).as('id')).executeTakeFirstOrThrow()).id ?? 0);
  const filtered = query.filters.length > 0;

  facts.total ??= await count(filtered ? all.where((eb) => filtersToSql(eb, table, accountId, query.filters)) : all);
  const totalEntries = facts.total;
  let rows: Row[] = [];
  if ((query.page - 1) * PAGE_SIZE < totalEntries) {
    const start = facts.nearestStart(query.page);
    const skip = (query.page - (start?.page ?? 1)) * PAGE_SIZE;
    everything.total ??= await count(all);
    const rowsWalked = ((skip + PAGE_SIZE) * everything.total) / totalEntries;
    const walk = !filtered || rowsWalked < totalEntries * INDEX_READ_COST;
    let from = all;
    let firstId = start?.firstId;
    if (walk) {
      const span = (everything.idSpan ??= { first: await idAt('min'), last: await idAt('max') });
      if (everything.total / (span.last - span.first + 1) >= TABLE_WALK_MIN_DENSITY) {
        // Bounded by the account's span, so that no other account's rows before or after it are read.
        from = db.selectFrom(table).where(request.unindexed(`${table}.account_id`), '=', accountId).where(`${table}.id`, '<=', span.last);
        firstId = Math.max(firstId ?? span.first, span.first);
      }
    }
    const matching = filtered
      ? from.where((eb) => filtersToSql(eb, table, accountId, query.filters, walk ? request.unindexed : undefined))
      : from;
    rows = (await select(matching.$if(firstId !== undefined, (qb) => qb.where(`${table}.id`, '>=', firstId!)))
      .orderBy(`${table}.id`)
      .limit(PAGE_SIZE)
      .$if(skip > 0, (qb) => qb.offset(skip))
      .execute()) as Row[];
    facts.learnPage(query.page, rows.map((row) => row.id), PAGE_SIZE);
  }
  return { entries: rows, totalEntries, page: query.page, totalPages: Math.ceil(totalEntries / PAGE_SIZE) };
}
