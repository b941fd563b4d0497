/**
 * Sums of money, exact to the cent whatever the values. The index keeps each money value as a
 * DOUBLE and beside it its rank (number-rank.ts): twice its whole cents when it is a whole number
 * of cents, odd otherwise. A sum of ranks is a sum of integers, exact and cheaper for DuckDB than
 * a sum of doubles, and half of it is the sum in cents of the values that are whole cents. The
 * few values that are not (19.999, or a value beyond the ranks' limit) are taken to six decimal
 * places and summed apart as DECIMAL(38,6) (moneyFixSql), and rounding is done here on integers:
 * a sum of doubles rounded to cents put 1.255 at 1.25 and made totals depend on the order the
 * rows were added in.
 */

/**
 * Below this a DOUBLE cast to DECIMAL(38,6) is the decimal it was written as, to six places: the
 * double lies within 2^-28 of that decimal. From 2^33 on it can lie more than half a millionth
 * off (8589934592.005 is 8589934592.00499916...); the bound is kept well below that, so that the
 * cast's own rounding stays far inside it too. Larger values are read from their shortest text,
 * which is the decimal written: a cast hundreds of times slower (docs/performance.md), kept to
 * amounts no funnel's conversion reaches.
 */
const EXACT_CAST_BELOW = 2 ** 26;

/**
 * The SQL of a money column's fix over a group's rows `c`: over the values that are not whole
 * cents (odd ranks), the sum of twice the value (to six places) less its rank's hundredth, so that
 * twice the sum of the values is (the sum of the ranks) / 100 + fix. Asked only of an account
 * that has such values (notWholeCentsQuery).
 */
export function moneyFixSql(column: string): string {
  const rank = `c.${column}_rank`;
  const value = `c.${column}`;
  const decimal = `CASE WHEN abs(${value}) < ${EXACT_CAST_BELOW} THEN ${value}::DECIMAL(38,6) ELSE ${value}::VARCHAR::DECIMAL(38,6) END`;
  return `sum(CASE WHEN ${rank} & 1 = 1 THEN (${decimal}) * 2 - (${rank} * 0.01)::DECIMAL(38,6) END)`;
}

/** Twice a sum of money in millionths, from its parts as DuckDB gives them (integers, or text: the DECIMAL's digits; no fix is 0). */
export function twiceMillionths(ranks: unknown, fix: unknown): bigint {
  return (ranks === null || ranks === undefined ? 0n : BigInt(ranks as number | string) * 10_000n) + millionthsOf(fix);
}

/** The sum, rounded to cents (half away from zero), as a number: `twice` is twice the sum in millionths. */
export function centsOf(twice: bigint, count = 1n): number {
  return Number(roundedQuotient(twice, 20_000n * count)) / 100;
}

/** `dividend / divisor` (divisor positive) rounded to the nearest whole number, halves away from zero. */
export function roundedQuotient(dividend: bigint, divisor: bigint): bigint {
  const magnitude = (2n * (dividend < 0n ? -dividend : dividend) + divisor) / (2n * divisor);
  return dividend < 0n ? -magnitude : magnitude;
}

/** A DECIMAL with 6 places as DuckDB writes it (`-12.345600`), in millionths; null is 0. */
function millionthsOf(decimal: unknown): bigint {
  if (decimal === null || decimal === undefined) return 0n;
  const text = String(decimal);
  const match = /^(-?)(\d+)\.(\d{6})$/.exec(text);
  if (!match) throw new Error(`not a DECIMAL with 6 places: ${text}`);
  const millionths = BigInt(match[2]!) * 1_000_000n + BigInt(match[3]!);
  return match[1] ? -millionths : millionths;
}
