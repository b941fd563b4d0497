import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addDays, dateIn, isReportDate, PRESETS, presetRange, startOfDay } from '../../console/src/dates.js';
import { clausesOf, filtersOf, filtersWithin, queryOf, withClause } from '../../console/src/query.js';

/** The console's pure parts: a report's days in a time zone, and the query text it shares between tabs. */

describe("a day's first instant in a time zone", () => {
  const cases: [string, string, string][] = [
    ['2026-03-01', 'UTC', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01', 'America/New_York', '2026-03-01T05:00:00.000Z'],
    ['2026-07-01', 'America/New_York', '2026-07-01T04:00:00.000Z'],
    // Berlin springs forward at 02:00: the day still starts at midnight, an hour ahead of UTC.
    ['2026-03-29', 'Europe/Berlin', '2026-03-28T23:00:00.000Z'],
    ['2026-03-30', 'Europe/Berlin', '2026-03-29T22:00:00.000Z'],
    // Santiago springs forward at midnight: 00:00 does not exist, the day starts at 01:00 (-03).
    ['2026-09-06', 'America/Santiago', '2026-09-06T04:00:00.000Z'],
    ['2026-09-07', 'America/Santiago', '2026-09-07T03:00:00.000Z'],
    // Cairo springs forward at midnight too, east of UTC.
    ['2026-04-24', 'Africa/Cairo', '2026-04-23T22:00:00.000Z'],
    ['2026-11-24', 'Asia/Kolkata', '2026-11-23T18:30:00.000Z'],
  ];
  for (const [date, zone, instant] of cases) {
    test(`${date} in ${zone} starts at ${instant}`, () => {
      const start = startOfDay(date, zone);
      assert.equal(start.toISOString(), instant);
      assert.equal(dateIn(start, zone), date, 'the instant is on the day');
      assert.equal(dateIn(start.getTime() - 1000, zone), addDays(date, -1), 'the second before is on the day before');
    });
  }
});

test('presets end today and start where their names say, across a year', () => {
  assert.deepEqual(
    PRESETS.map((preset) => presetRange(preset, '2026-01-15')),
    [
      ['2026-01-09', '2026-01-15'],
      ['2025-12-17', '2026-01-15'],
      ['2025-10-18', '2026-01-15'],
      ['2026-01-01', '2026-01-15'],
      ['2025-12-01', '2025-12-31'],
    ],
  );
});

test('a report date is a whole YYYY-MM-DD from 1970 on', () => {
  for (const good of ['1970-01-01', '2026-02-28']) assert.ok(isReportDate(good), good);
  for (const bad of ['', '0002-03-01', '1969-12-31', '2026-13-01', '2026-3-1']) assert.ok(!isReportDate(bad), bad);
});

describe('the query text', () => {
  test('reads clauses and writes them back with commas and colons readable', () => {
    const clauses = clausesOf('?utm_source=facebook&cart_integration.in=clickbank,buygoods&created_at.gte=2026-03-01T00:00:00Z');
    assert.deepEqual(clausesOf(queryOf(clauses)), clauses);
    assert.equal(queryOf(clauses), 'utm_source=facebook&cart_integration.in=clickbank,buygoods&created_at.gte=2026-03-01T00:00:00Z');
    assert.equal(queryOf([{ name: 'utm_campaign', value: 'a&b c' }]), 'utm_campaign=a%26b%20c');
  });

  test('a clause added for a parameter already there takes its place', () => {
    const clauses = clausesOf('amount.gte=10&country=US');
    assert.equal(queryOf(withClause(clauses, { name: 'amount.gte', value: '50' })), 'amount.gte=50&country=US');
    assert.equal(queryOf(withClause(clauses, { name: 'amount.lt', value: '90' })), 'amount.gte=10&country=US&amount.lt=90');
  });

  test('a parameter given twice is refused, not one of its values quietly kept', () => {
    assert.deepEqual(filtersOf('amount.gte=10&country=US'), { 'amount.gte': '10', country: 'US' });
    assert.throws(() => filtersOf('amount.gte=10&amount.gte=50'), /amount\.gte is given more than once/);
  });
});

describe("a report's filters: its range beside the query's own bounds of created_at, each read by the API", () => {
  const range = { 'created_at.gte': '2026-03-01T05:00:00.000Z', 'created_at.lt': '2026-04-01T04:00:00.000Z' };
  const between = '2026-03-01T05:00:00.000Z,2026-04-01T03:59:59.000Z';
  const cases: [query: string, filters: Record<string, string> | RegExp][] = [
    ['utm_source=google', { utm_source: 'google', ...range }],
    // Kept as written, for the API to read by its rules (no offset: UTC), not the browser's.
    [
      'created_at.gte=2026-03-10T12:00:00&created_at.lt=2026-03-11',
      { 'created_at.gte': '2026-03-10T12:00:00', 'created_at.lt': '2026-03-11', 'created_at.between': between },
    ],
    ['created_at.gte=yesterday', { 'created_at.gte': 'yesterday', 'created_at.between': between }],
    ['created_at.between=2026-03-02,2026-03-03', { 'created_at.between': '2026-03-02,2026-03-03', ...range }],
    ['created_at.lt=2026-03-11&created_at.between=2026-03-02,2026-03-03', /keep one of them/],
  ];
  for (const [query, filters] of cases) {
    test(query, () => {
      const within = () => filtersWithin(query, '2026-03-01', '2026-03-31', 'America/New_York');
      if (filters instanceof RegExp) assert.throws(within, filters);
      else assert.deepEqual(within(), filters);
    });
  }
});
