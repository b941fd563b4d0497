import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Condition, Filter, Scalar } from './parse.js';

/**
 * Turns parsed filters into one boolean SQL expression over the rows of `table`, with every
 * value bound as a parameter. For columns of the table itself: array columns are filtered in the
 * columnar index of conversions (src/db/columnar/filters.ts), never here.
 */
export function filtersToSql(eb: ExpressionBuilder<any, any>, table: string, filters: Filter[]): Expression<SqlBool> {
  return eb.and(
    filters.map(({ column, condition }) => {
      if (column.storage) throw new Error(`${column.name} is an array column, which SQL lists do not filter`);
      return conditionToSql(eb, `${table}.${column.name}`, condition);
    }),
  );
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
