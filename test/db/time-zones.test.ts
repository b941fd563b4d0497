import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type OffsetSpan, offsetAt, offsetSpans, offsetSpansOver, WINDOW_SECONDS } from '../../src/db/columnar/time-zones.js';

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

/** The offset the spans give at `epochSeconds`, as a summary's CASE over them does. */
function offsetIn(spans: OffsetSpan[], epochSeconds: number): number {
  return spans.findLast((span) => span.from === undefined || span.from <= epochSeconds)!.offsetSeconds;
}

const windowOf = (iso: string) => Math.floor(at(iso) / WINDOW_SECONDS);

test('over windows one after another, the offsets are those over the whole span they cover', () => {
  const windows = Array.from({ length: 13 }, (_, index) => windowOf('2026-01-01T00:00:00Z') + index);
  const whole = offsetSpans('America/New_York', windows[0]! * WINDOW_SECONDS, (windows.at(-1)! + 1) * WINDOW_SECONDS);
  assert.deepEqual(offsetSpansOver('America/New_York', windows), whole);
});

test('over windows centuries apart, every hour in them has the offset the zone had, from a few spans', () => {
  const windows = [windowOf('1700-03-15T00:00:00Z'), windowOf('1969-12-31T00:00:00Z'), windowOf('2026-03-08T00:00:00Z'), windowOf('2026-11-01T00:00:00Z')];
  const spans = offsetSpansOver('America/New_York', windows);
  const format = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeZoneName: 'longOffset' });
  for (const window of windows) {
    for (let time = window * WINDOW_SECONDS; time < (window + 1) * WINDOW_SECONDS; time += 3600) {
      assert.equal(offsetIn(spans, time), offsetAt(format, time), `at ${new Date(time * 1000).toISOString()}`);
    }
  }
  // Local mean time in 1700, then Eastern Standard Time, then the two changes of 2026.
  assert.deepEqual(
    spans.map((span) => span.offsetSeconds),
    [-(4 * 3600 + 56 * 60 + 2), -5 * 3600, -4 * 3600, -5 * 3600],
  );
});

test('no windows, no offsets', () => {
  assert.deepEqual(offsetSpansOver('Europe/Berlin', []), []);
});
