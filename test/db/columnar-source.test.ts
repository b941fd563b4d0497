import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendInBatches } from '../../src/db/columnar/source.js';

/**
 * A source of rows [id] with ids 1..count, `arriving` more committed after each read (a cart's
 * notifications arriving while the index catches up). It fails past 100 reads rather than let
 * a catch-up that never ends hang the test.
 */
function growingSource(count: number, arriving: number) {
  let rows = count;
  let reads = 0;
  const rowsAfter = async (id: number, limit: number): Promise<unknown[][]> => {
    if (++reads > 100) throw new Error('still reading after 100 reads: the catch-up chases the rows arriving');
    const batch = Array.from({ length: Math.max(0, Math.min(limit, rows - id)) }, (_, index) => [id + index + 1]);
    rows += arriving;
    return batch;
  };
  return { rowsAfter, reads: () => reads };
}

// `batches`: the sizes appended, where no rows arrive meanwhile.
const CASES = [
  { name: 'nothing new', count: 0, arriving: 0, batches: [] as number[] },
  { name: 'fewer rows than a batch', count: 3, arriving: 0, batches: [3] },
  { name: 'whole batches', count: 10, arriving: 0, batches: [5, 5] },
  { name: 'whole batches and a part', count: 12, arriving: 0, batches: [5, 5, 2] },
  { name: 'rows arriving during every read', count: 12, arriving: 3, batches: undefined },
  { name: 'rows arriving nearly a batch a read', count: 12, arriving: 4, batches: undefined },
];

for (const { name, count, arriving, batches } of CASES) {
  test(`a catch-up over ${name} appends every row there when it began, in order, and ends at the first read short of a batch`, async () => {
    const source = growingSource(count, arriving);
    const appended: number[][] = [];
    await appendInBatches(0, 5, source.rowsAfter, async (rows) => {
      appended.push(rows.map((row) => row[0] as number));
    });
    const ids = appended.flat();
    assert.deepEqual(
      ids,
      Array.from({ length: ids.length }, (_, index) => index + 1),
      'every id once, in order',
    );
    assert.ok(ids.length >= count, `the ${count} rows there when it began are in`);
    assert.ok(
      appended.every((batch) => batch.length > 0),
      'no empty batch appended',
    );
    if (batches)
      assert.deepEqual(
        appended.map((batch) => batch.length),
        batches,
      );
    const whole = appended.filter((batch) => batch.length === 5).length;
    assert.equal(source.reads(), whole + 1, 'one read after the whole batches, short of one, and no more');
  });
}
