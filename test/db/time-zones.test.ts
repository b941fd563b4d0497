import assert from 'node:assert/strict';
import { test } from 'node:test';
import { offsetSpans } from '../../src/db/columnar/time-zones.js';

/** A time zone's offsets over a span, each change to the second: what a summary's time buckets add to UTC. */

const at = (iso: string) => Date.parse(iso) / 1000;
const YEAR_2026 = [at('2026-01-01T00:00:00Z'), at('2027-01-01T00:00:00Z')] as const;

for (const [timeZone, expected] of [
  ['UTC', [{ from: undefined, offsetSeconds: 0 }]],
  ['Asia/Kolkata', [{ from: undefined, offsetSeconds: 5.5 * 3600 }]],
  [
    'America/New_York',
    [
      { from: undefined, offsetSeconds: -5 * 3600 },
      { from: at('2026-03-08T07:00:00Z'), offsetSeconds: -4 * 3600 },
      { from: at('2026-11-01T06:00:00Z'), offsetSeconds: -5 * 3600 },
    ],
  ],
  [
    'Europe/Berlin',
    [
      { from: undefined, offsetSeconds: 3600 },
      { from: at('2026-03-29T01:00:00Z'), offsetSeconds: 7200 },
      { from: at('2026-10-25T01:00:00Z'), offsetSeconds: 3600 },
    ],
  ],
  [
    // Half an hour of daylight saving, in the southern summer.
    'Australia/Lord_Howe',
    [
      { from: undefined, offsetSeconds: 11 * 3600 },
      { from: at('2026-04-04T15:00:00Z'), offsetSeconds: 10.5 * 3600 },
      { from: at('2026-10-03T15:30:00Z'), offsetSeconds: 11 * 3600 },
    ],
  ],
] as const) {
  test(`${timeZone} over 2026: each change of offset at the second it happens (${expected.length - 1})`, () => {
    assert.deepEqual(offsetSpans(timeZone, ...YEAR_2026), expected);
  });
}

test('a span within one offset is that offset alone', () => {
  assert.deepEqual(offsetSpans('America/New_York', at('2026-06-01T00:00:00Z'), at('2026-06-30T00:00:00Z')), [{ from: undefined, offsetSeconds: -4 * 3600 }]);
});
