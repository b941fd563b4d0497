import assert from 'node:assert/strict';
import { test } from 'node:test';
import { secondsLeft } from '../../src/db/columnar/catch-up-pace.js';

test('a catch-up has as many seconds left as its pace since it was first seen gives', () => {
  const cases: { first: [number, number]; now: [number, number]; toId: number; left: number | undefined; why: string }[] = [
    { first: [0, 1_000], now: [100_000, 3_000], toId: 1_000_000, left: 18, why: '100,000 ids in 2 s, 900,000 to go' },
    { first: [500_000, 0], now: [600_000, 1_000], toId: 700_000, left: 1, why: 'counted from where it was first seen, not from id 0' },
    { first: [0, 0], now: [1_000_000, 20_000], toId: 1_000_000, left: 0, why: 'at its end' },
    { first: [0, 0], now: [1_000_000, 20_000], toId: 900_000, left: 0, why: 'past the end it was told of (rows written meanwhile)' },
    { first: [40_000, 1_000], now: [40_000, 5_000], toId: 1_000_000, left: undefined, why: 'not moved since first seen: no pace yet' },
    { first: [40_000, 1_000], now: [45_000, 1_000], toId: 1_000_000, left: undefined, why: 'no time gone by' },
  ];
  for (const { first, now, toId, left, why } of cases) {
    assert.equal(secondsLeft({ atId: first[0], atMs: first[1] }, { fromId: 0, atId: now[0], toId }, now[1]), left, why);
  }
});
