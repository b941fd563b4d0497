import type { Kysely } from 'kysely';
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

/**
 * Reads one page of an account's rows of `table` in ascending id order, with the exact
 * number of rows matching the filters. The count and the page are two queries: a window
 * count is slower on both databases (field notes).
 */
export async function listRows<Row>(
  db: Kysely<any>,
  table: string,
  accountId: number,
  query: ListQuery,
): Promise<ListPage<Row>> {
  const matching = db
    .selectFrom(table)
    .where(`${table}.account_id`, '=', accountId)
    .$if(query.filters.length > 0, (qb) => qb.where((eb) => filtersToSql(eb, table, accountId, query.filters)));

  const { count } = await matching.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  const totalEntries = Number(count);
  const offset = (query.page - 1) * PAGE_SIZE;
  const rows =
    offset < totalEntries
      ? ((await matching.selectAll(table).orderBy(`${table}.id`).limit(PAGE_SIZE).offset(offset).execute()) as Row[])
      : [];
  return { entries: rows, totalEntries, page: query.page, totalPages: Math.ceil(totalEntries / PAGE_SIZE) };
}
