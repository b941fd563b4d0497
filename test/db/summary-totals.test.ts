import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { roundToCents, totalsFromGroups } from '../../src/db/columnar/queries.js';

/** A summary's totals made from its groups must be what DuckDB makes of the rows themselves. */

test("money is rounded to cents exactly as DuckDB's round(x, 2) rounds it, halves away from zero", async () => {
  const values = [0, 0.005, 0.015, 1.005, 2.675, 19.99, 19.995, 100.125, 1234567.895, -0.005, -1.005, -2.675, -19.995, 0.1 + 0.2, 1e-12, 123456789.125];
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const rows = (
      await connection.runAndReadAll(`SELECT round(x, 2) FROM unnest([${values.map((value) => `${value}::DOUBLE`).join(', ')}]) AS t(x)`)
    ).getRows();
    assert.deepEqual(
      values.map(roundToCents),
      rows.map(([rounded]) => rounded),
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
});

test('the totals add up the groups, average every amount, and take the buyers as counted apart', () => {
  // Keys (day, source), then count, amount, tax, shipping, average, buyers, then the unrounded sums and the amounts counted.
  const rows = [
    ['2026-03-01', 'facebook', 2, 30.01, 0, 4.95, 15.01, 2, 30.005, 0, 4.95, 2],
    ['2026-03-01', 'google', 1, 0, 0, 0, null, 1, null, null, null, 0],
    ['2026-03-02', null, 3, 60, 1.5, 0, 20, 1, 60.0, 1.5, 0, 3],
  ];
  assert.deepEqual(totalsFromGroups(rows, 2, 3), {
    groups: [
      ['2026-03-01', 'facebook', 2, 30.01, 0, 4.95, 15.01, 2],
      ['2026-03-01', 'google', 1, 0, 0, 0, null, 1],
      ['2026-03-02', null, 3, 60, 1.5, 0, 20, 1],
    ],
    totals: [6, 90.01, 1.5, 4.95, 18, 3],
  });
});

test('totals of no groups are zeros, with no average', () => {
  assert.deepEqual(totalsFromGroups([], 1, 0), { groups: [], totals: [0, 0, 0, 0, null, 0] });
});
