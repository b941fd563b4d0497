import { type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Condition, Filter, Scalar } from './parse.js';

/**
 * Turns parsed filters into one boolean SQL expression over the account's rows of `table`,
 * with every value bound as a parameter. An array column holds when any of its elements
 * satisfies the condition; the element table is searched by (account, value), so that a
 * selective filter reads its index instead of every row of the account. With `unindexed`, the
 * conditions on the table's own columns are written so that no index of theirs is chosen.
 */
export function filtersToSql(
  eb: ExpressionBuilder<any, any>,
  table: string,
  accountId: number,
  filters: Filter[],
  unindexed?: (ref: string) => Expression<unknown>,
): Expression<SqlBool> {
  const own = filters.filter((filter) => !filter.column.storage);
  const inElementTables = new Map<string, Filter[]>();
  for (const filter of filters) {
    if (filter.column.storage) inElementTables.set(filter.column.name, [...(inElementTables.get(filter.column.name) ?? []), filter]);
  }
  return eb.and([
    ...own.map(({ column, condition }) => {
      const ref = `${table}.${column.name}`;
      return conditionToSql(eb, unindexed ? unindexed(ref) : ref, condition);
    }),
    ...[...inElementTables.values()].map((columnFilters) => eb(`${table}.id`, 'in', parentsMatchingAll(eb, accountId, columnFilters))),
  ]);
}

/**
 * The ids of the rows with, for each filter, an element satisfying it: one subquery for all the
 * filters on an array column, their matches intersected. As separate `id in (...)` conditions,
 * SQLite without statistics can look up every pair of the two lists' ids, which is seconds at
 * 10,000 rows and grows with the square of them.
 */
function parentsMatchingAll(eb: ExpressionBuilder<any, any>, accountId: number, filters: Filter[]) {
  const storage = filters[0]!.column.storage!;
  const [first, ...others] = filters.map(({ condition }) =>
    eb
      .selectFrom(storage.table)
      .select(`${storage.table}.${storage.parentColumn}`)
      .where(`${storage.table}.account_id`, '=', accountId)
      .where((inner) => conditionToSql(inner, `${storage.table}.${storage.valueColumn}`, condition)),
  );
  return others.reduce((query, other) => query.intersect(other), first!);
}

function conditionToSql(eb: ExpressionBuilder<any, any>, ref: string | Expression<unknown>, condition: Condition): Expression<SqlBool> {
  switch (condition.kind) {
    case 'compare':
      return eb(ref, condition.op, stored(condition.value));
    case 'range':
      return eb.and([eb(ref, '>=', stored(condition.from)), eb(ref, '<=', stored(condition.to))]);
    case 'in':
      return eb(ref, 'in', condition.values.map(stored));
    case 'anyOf':
      return eb.or(condition.conditions.map((inner) => conditionToSql(eb, ref, inner)));
  }
}

/** Booleans are stored as 0/1 on both databases. */
const stored = (value: Scalar): number | string => (typeof value === 'boolean' ? Number(value) : value);
