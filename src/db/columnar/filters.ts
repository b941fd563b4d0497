import { DOUBLE, LIST, VARCHAR, listValue, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import type { ColumnType } from '../../filters/catalogue.js';
import type { Condition, Filter, Scalar } from '../../filters/parse.js';
import { isRanked, rankedColumn, rankOf } from './number-rank.js';

const SQL_TYPE: Record<Exclude<ColumnType, 'stringArray'>, string> = {
  integer: 'BIGINT',
  timestamp: 'BIGINT', // epoch seconds
  boolean: 'TINYINT', // 0/1, as the row store keeps it
  number: 'DOUBLE',
  string: 'VARCHAR',
};

/** The DuckDB type that holds a filterable column of `type` (an array's elements are VARCHAR). */
export function duckDbType(type: ColumnType): string {
  return type === 'stringArray' ? 'VARCHAR' : SQL_TYPE[type];
}

/**
 * Turns parsed filters into one condition over the columnar index's `conversions` table (the
 * catalogue's column names), every value a bound parameter cast to its column's type. `params`
 * holds the caller's parameters already ($1 to $n), such as the account at $1, which the
 * array tables are searched by. A list of values is matched with list_contains: DuckDB answers
 * it several times faster than IN or OR over a column of strings.
 */
export function filtersToDuckDb(filters: Filter[], params: BoundParams, accountParam: string): string {
  const bind = (value: number | string | (number | string)[], type: string) => {
    params.bind(value);
    return `$${params.values.length}::${type}`;
  };
  const toSql = (ref: string, type: string, condition: Condition): string => {
    switch (condition.kind) {
      case 'compare':
        return `${ref} ${condition.op} ${bind(stored(condition.value), type)}`;
      case 'range':
        return `${ref} BETWEEN ${bind(stored(condition.from), type)} AND ${bind(stored(condition.to), type)}`;
      case 'in':
        return `list_contains(${bind(condition.values.map(stored), `${type}[]`)}, ${ref})`;
      case 'anyOf':
        return `(${condition.conditions.map((inner) => toSql(ref, type, inner)).join(' OR ')})`;
    }
  };
  const parts: string[] = [];
  const arrays = new Map<string, Filter[]>();
  for (const filter of filters) {
    const { column } = filter;
    if (column.storage) arrays.set(column.name, [...(arrays.get(column.name) ?? []), filter]);
    else {
      const ranked = isRanked(column) ? rankedCondition(filter.condition) : undefined;
      parts.push(ranked ? toSql(rankedColumn(column.name), 'BIGINT', ranked) : toSql(column.name, duckDbType(column.type), filter.condition));
    }
  }
  // Each filter on an array column needs an element of its own satisfying it: their matches intersected.
  for (const columnFilters of arrays.values()) {
    const { table, parentColumn, valueColumn } = columnFilters[0]!.column.storage!;
    const matches = columnFilters.map(
      (filter) => `SELECT ${parentColumn} FROM ${table} WHERE account_id = ${accountParam} AND ${toSql(valueColumn, 'VARCHAR', filter.condition)}`,
    );
    parts.push(`id IN (${matches.join(' INTERSECT ')})`);
  }
  return parts.length === 0 ? 'TRUE' : parts.join(' AND ');
}

/**
 * Parameters of a DuckDB statement, each with its type given: DuckDB would otherwise infer a list's
 * type from its first element (INTEGER for 0, and then 1000.5 fails). Numbers bind as DOUBLE,
 * cast to their column's type in the SQL.
 */
export class BoundParams {
  readonly values: DuckDBValue[] = [];
  readonly types: DuckDBType[] = [];

  constructor(...values: (number | string)[]) {
    for (const value of values) this.bind(value);
  }

  /** Adds a parameter; its number is the length of `values`. */
  bind(value: number | string | (number | string)[]): void {
    const typeOf = (item: number | string) => (typeof item === 'number' ? DOUBLE : VARCHAR);
    if (Array.isArray(value)) {
      this.values.push(listValue(value));
      this.types.push(LIST(value.length > 0 ? typeOf(value[0]!) : VARCHAR));
    } else {
      this.values.push(value);
      this.types.push(typeOf(value));
    }
  }
}

/**
 * A condition on a number column as the same condition on its rank (number-rank.ts), when every
 * value it names is a whole number of cents; else undefined, and the doubles are compared.
 */
function rankedCondition(condition: Condition): Condition | undefined {
  const rank = (value: Scalar) => (typeof value === 'number' ? rankOf(value) : undefined);
  switch (condition.kind) {
    case 'compare': {
      const value = rank(condition.value);
      return value === undefined ? undefined : { ...condition, value };
    }
    case 'range': {
      const [from, to] = [rank(condition.from), rank(condition.to)];
      return from === undefined || to === undefined ? undefined : { kind: 'range', from, to };
    }
    case 'in': {
      const values = condition.values.map(rank);
      return values.includes(undefined) ? undefined : { kind: 'in', values: values as number[] };
    }
    case 'anyOf': {
      const conditions = condition.conditions.map(rankedCondition);
      return conditions.includes(undefined) ? undefined : { kind: 'anyOf', conditions: conditions as Condition[] };
    }
  }
}

/** A filter's value as the index holds it: booleans as 0/1. */
export const stored = (value: Scalar): number | string => (typeof value === 'boolean' ? Number(value) : value);
