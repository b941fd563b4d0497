import type { FilterColumn } from '../../filters/catalogue.js';

/**
 * A number column's rank: an integer kept beside the DOUBLE in the index, so that a filter
 * naming a whole number of cents (`amount.gte=96.06`, what price questions ask) compares
 * integers. DuckDB compares doubles several times slower than integers (NaN ordering makes it
 * branch), and money kept as cents alone would round numbers the contract accepts (19.999).
 *
 * The rank of a value v is twice the whole cents c when v is the double nearest to c/100, and
 * odd (2c + 1) when v lies between the doubles of c/100 and (c + 1)/100. For any filter value x
 * that is the double of cx/100, every comparison of v with x is the same comparison of the rank
 * with 2cx: v >= x when rank >= 2cx, v > x when rank > 2cx, v = x when rank = 2cx, and so on.
 * Values from RANK_LIMIT on are ranked beyond every filter value that uses the rank.
 */

/** The columns kept ranked beside their values: every number column. */
export function isRanked(column: FilterColumn): boolean {
  return column.type === 'number';
}

/** Filter values below this in magnitude use the rank: their cents times 100 stay exact doubles. */
export const RANK_LIMIT = 1e13;
// Ranked beyond 2 × (every ranked filter value's cents).
const RANK_BEYOND = 2 * RANK_LIMIT * 100 + 1;

/** The index's column of a number column's ranks. */
export function rankedColumn(name: string): string {
  return `${name}_rank`;
}

/**
 * The rank of a filter value `x` (2cx), or undefined when it is not a whole number of cents
 * below RANK_LIMIT, which is then compared as a double.
 */
export function rankOf(x: number): number | undefined {
  if (!(Math.abs(x) < RANK_LIMIT)) return undefined;
  const cents = Math.round(x * 100);
  return cents / 100 === x ? 2 * cents : undefined;
}

/**
 * DuckDB's expression of the rank of the DOUBLE expression `value` (null for null). The cents
 * below it are found from floor(value × 100), which rounding can put one off, and set right by
 * comparing the doubles of the cents on either side with the value itself.
 */
export function rankSql(value: string): string {
  const floor = `floor(${value} * 100)`;
  const cents = `CASE WHEN (${floor} + 1) / 100 <= ${value} THEN ${floor} + 1 WHEN ${floor} / 100 > ${value} THEN ${floor} - 1 ELSE ${floor} END`;
  const rank = `2 * (${cents}) + CASE WHEN (${cents}) / 100 = ${value} THEN 0 ELSE 1 END`;
  return `CASE WHEN ${value} >= ${RANK_LIMIT} THEN ${RANK_BEYOND} WHEN ${value} <= -${RANK_LIMIT} THEN -${RANK_BEYOND} ELSE (${rank})::BIGINT END`;
}
