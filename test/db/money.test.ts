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

test('in DuckDB, the parts of values that are not whole cents sum to their exact decimal sum', async () => {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const values = [1.255, 0.105, 19.99, -0.005, 12.345, 100];
    const rows = values.map((value) => `(${value}::DOUBLE)`).join(', ');
    const sql = `SELECT sum(c.amount_rank), ${moneyFixSql('amount')} FROM (SELECT amount, ${rankSql('amount')} AS amount_rank FROM (VALUES ${rows}) v(amount)) c`;
    const [sumOfRanks, sumOfFixes] = (await connection.runAndReadAll(sql)).getRows()[0]!;
    // 1.255 + 0.105 + 19.99 - 0.005 + 12.345 + 100 = 133.69, exactly.
    assert.equal(twiceMillionths(sumOfRanks, String(sumOfFixes)), 267_380_000n);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
});
