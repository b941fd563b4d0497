import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { FilterFacts } from './list-cache.js';
import type { ListQuery } from './parse.js';
import { filtersToSql } from './sql.js';

export const PAGE_SIZE = 100;

/** The list envelope (docs/api.md, "Listing"). */
export interface ListPage<Entry> {
  entries: Entry[];
  totalEntries: number;
  page: number;
  totalPages: number;
}

/** A list page as it is sent: its entries JSON text already, comma-separated (the inside of the envelope's array). */
export interface ListPageJson extends Omit<ListPage<never>, 'entries'> {
  entriesJson: Uint8Array | string;
}

/** A checked list request: its entity tag is known before any row is read (listETag). */
export interface PreparedList {
  etag: string;
  read(): Promise<ListPageJson>;
}

/** A list request as a service hands it to a repository, which adds its table. */
export interface AccountList {
  accountId: number;
  query: ListQuery;
  /** What earlier requests learnt about these filters while the account's data held (ListCache). */
  facts: FilterFacts;
}

export interface ListRequest extends AccountList {
  db: Kysely<any>;
  table: string;
}

/**
 * Reads one page of an account's rows in ascending id order, with the exact number of rows
 * matching the filters, through the database's own planner. The count is taken from `facts`
 * when known, and a page starts from the nearest page boundary known, by id, instead of an
 * OFFSET from the first row. For tables of a few thousand rows an account (assets); conversions
 * are answered by the columnar index (src/db/columnar).
 * `select` picks what a row returns (all its columns by default); it must include the id.
 */
export async function listRows<Row extends { id: number }>(
  { db, table, accountId, query, facts }: ListRequest,
  select: (rows: SelectQueryBuilder<any, any, object>) => SelectQueryBuilder<any, any, any> = (rows) => rows.selectAll(table),
): Promise<ListPage<Row>> {
  const matching = db
    .selectFrom(table)
    .where(`${table}.account_id`, '=', accountId)
    .$if(query.filters.length > 0, (qb) => qb.where((eb) => filtersToSql(eb, table, query.filters)));
  facts.total ??= Number((await matching.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count);
  const totalEntries = facts.total;
  let rows: Row[] = [];
  if ((query.page - 1) * PAGE_SIZE < totalEntries) {
    const start = facts.nearestStart(query.page);
    const skip = (query.page - (start?.page ?? 1)) * PAGE_SIZE;
    rows = (await select(matching.$if(start !== undefined, (qb) => qb.where(`${table}.id`, '>=', start!.firstId)))
      .orderBy(`${table}.id`)
      .limit(PAGE_SIZE)
      .$if(skip > 0, (qb) => qb.offset(skip))
      .execute()) as Row[];
    facts.learnPage(
      query.page,
      rows.map((row) => row.id),
      PAGE_SIZE,
    );
  }
  return { entries: rows, totalEntries, page: query.page, totalPages: Math.ceil(totalEntries / PAGE_SIZE) };
}
