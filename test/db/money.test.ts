import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { centsOf, moneyFixSql, roundedQuotient, twiceMillionths } from '../../src/db/columnar/money.js';
import { rankSql } from '../../src/db/columnar/number-rank.js';

/** Sums of money from their parts: whole numbers, rounded to cents half away from zero, never through a double. */

for (const [dividend, divisor, expected] of [
  [5n, 2n, 3n],
  [-5n, 2n, -3n],
  [4n, 2n, 2n],
  [1n, 3n, 0n],
  [2n, 3n, 1n],
  [-2n, 3n, -1n],
  [0n, 7n, 0n],
] as const) {
  test(`${dividend} / ${divisor} rounds to ${expected}`, () => {
    assert.equal(roundedQuotient(dividend, divisor), expected);
  });
}

for (const [ranks, fix, twice] of [
  [null, null, 0n],
  [2510, null, 25_100_000n],
  ['2510', '0.010000', 25_110_000n],
  [-2, '-0.010000', -30_000n],
  ['200000000000000000000', null, 2_000_000_000_000_000_000_000_000n],
] as const) {
  test(`ranks ${ranks} and fix ${fix} are twice ${twice} millionths`, () => {
    assert.equal(twiceMillionths(ranks, fix), twice);
  });
}

test('a fix that is not a DECIMAL with six places is refused, not misread', () => {
  assert.throws(() => twiceMillionths(0, '1.5'), /not a DECIMAL with 6 places/);
});

for (const [twice, count, cents] of [
  [2_510_000n, 1n, 1.26],
  [-2_510_000n, 1n, -1.26],
  [2_509_998n, 1n, 1.25],
  [25_100_000n, 1n, 12.55],
  [1_221_960_000n, 12n, 50.92],
] as const) {
  test(`twice ${twice} millionths over ${count} is ${cents}`, () => {
    assert.equal(centsOf(twice, count), cents);
  });
}

/** A decimal of at most six places in millionths, by its digits. */
function millionths(decimal: string): bigint {
  const [whole, fraction = ''] = decimal.replace('-', '').split('.');
  const magnitude = BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  return decimal.startsWith('-') ? -magnitude : magnitude;
}

for (const [values, why] of [
  [['1.255', '0.105', '19.99', '-0.005', '12.345', '100'], 'sub-cent and whole-cent values together'],
  [['8589934592.005'], 'a value whose double lies more than half a millionth below it'],
  [['99999999999.995', '67108864.005'], 'values near the money bound and where the cast stops being exact'],
  [['-99999999999.995', '-67108863.995'], 'the same below zero'],
  [['0.000001', '-0.000003', '9999.999999'], 'millionths'],
] as const) {
  test(`in DuckDB, the parts of ${why} sum to their exact decimal sum`, async () => {
    const sum = values.reduce((total, value) => total + millionths(value), 0n);
    assert.equal(await twiceSumInDuckDb(values), 2n * sum);
  });
}

test('in DuckDB, a value of more than six decimal places is taken to six, halves away from zero', async () => {
  assert.equal(await twiceSumInDuckDb(['0.0049999']), 2n * 5_000n);
  assert.equal(await twiceSumInDuckDb(['-1.2549999']), 2n * -1_255_000n);
});

/** Twice the sum in millionths of `values` as a summary's parts make it: the ranks' sum and the fix. */
async function twiceSumInDuckDb(values: readonly string[]): Promise<bigint> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const rows = values.map((value) => `(${value}::DOUBLE)`).join(', ');
    const sql = `SELECT sum(c.amount_rank), ${moneyFixSql('amount')} FROM (SELECT amount, ${rankSql('amount')} AS amount_rank FROM (VALUES ${rows}) v(amount)) c`;
    const [sumOfRanks, sumOfFixes] = (await connection.runAndReadAll(sql)).getRows()[0]!;
    return twiceMillionths(sumOfRanks, sumOfFixes === null ? null : String(sumOfFixes));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
