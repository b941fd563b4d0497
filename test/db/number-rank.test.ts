import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOUBLE, DuckDBInstance, LIST, listValue } from '@duckdb/node-api';
import { seededRandom } from '../../src/conversions/synthetic.js';
import { RANK_LIMIT, rankOf, rankSql } from '../../src/db/columnar/number-rank.js';

/** A number column's rank: comparing it with a filter's whole cents must answer as comparing the doubles would. */

for (const [value, expected] of [
  [96.06, 19_212],
  [0, 0],
  [-0, 0],
  [-5, -1_000],
  [19.99, 3_998],
  [19.999, undefined],
  [0.1 + 0.2, undefined],
  [RANK_LIMIT - 0.01, 2 * (RANK_LIMIT * 100 - 1)],
  [RANK_LIMIT, undefined],
  [-RANK_LIMIT, undefined],
] as const) {
  test(`a filter value of ${value} ranks as ${expected}`, () => {
    const rank = rankOf(value);
    assert.equal(rank === undefined ? undefined : rank + 0, expected);
  });
}

/** The double next to `value`, upwards or downwards. */
function nextDouble(value: number, direction: 1 | -1): number {
  if (value === 0) return direction * Number.MIN_VALUE;
  const bits = new BigInt64Array(new Float64Array([value]).buffer);
  bits[0]! += BigInt(Math.sign(value) * direction);
  return new Float64Array(bits.buffer)[0]!;
}

test('every comparison of a ranked value with whole cents answers as the doubles do', async () => {
  const thresholds = [0, 0.01, -0.01, 0.1, 0.29, 0.3, 1.15, 19.99, 96.06, 100, -42.5, 1_234_567.89, RANK_LIMIT - 0.01, -(RANK_LIMIT - 0.01)];
  // Each threshold, the doubles on either side of it and of its neighbours a cent away, values
  // between cents, values beyond the limit and values rounding makes awkward (0.1 + 0.2).
  const values = new Set<number>([0, -0, Number.MIN_VALUE, 0.1 + 0.2, 19.999, 1e-320, RANK_LIMIT, -RANK_LIMIT, 1e300, -1e300, 2 ** 53]);
  for (const threshold of thresholds) {
    for (const near of [threshold - 0.01, threshold, threshold + 0.01, threshold + 0.005, threshold - 0.005]) {
      values.add(near);
      values.add(nextDouble(near, 1));
      values.add(nextDouble(near, -1));
    }
  }
  const random = seededRandom(28);
  for (let index = 0; index < 2_000; index++) values.add(Number(((index % 2 ? -1 : 1) * random() * 10 ** (index % 9)).toFixed(index % 5)));

  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run('CREATE TABLE numbers (v DOUBLE)');
    const insert = await connection.prepare('INSERT INTO numbers SELECT unnest($1)');
    insert.bind([listValue([...values])], [LIST(DOUBLE)]);
    await insert.run();
    await connection.run(`ALTER TABLE numbers ADD COLUMN rank BIGINT; UPDATE numbers SET rank = ${rankSql('v')}`);
    for (const threshold of thresholds) {
      const rank = rankOf(threshold)!;
      for (const op of ['=', '>', '>=', '<', '<=']) {
        const reader = await connection.runAndReadAll(`SELECT v FROM numbers WHERE (v ${op} ${threshold}::DOUBLE) IS DISTINCT FROM (rank ${op} ${rank})`);
        assert.deepEqual(reader.getRows(), [], `v ${op} ${threshold}`);
      }
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
});
