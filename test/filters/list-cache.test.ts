import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { conversionCatalogue } from '../../src/conversions/schema.js';
import { FilterFacts, ListCache } from '../../src/filters/list-cache.js';
import { parseListQuery } from '../../src/filters/parse.js';

const query = (raw: Record<string, string>) => parseListQuery(raw, conversionCatalogue);

describe('FilterFacts', () => {
  const cases: { why: string; pages: [number, number[]][]; asked: number; expected: { page: number; firstId: number } | undefined }[] = [
    { why: 'nothing learnt yet', pages: [], asked: 3, expected: undefined },
    { why: 'the page itself was served', pages: [[3, [30, 31]]], asked: 3, expected: { page: 3, firstId: 30 } },
    { why: 'a full page tells where the next starts', pages: [[2, ids(20, 100)]], asked: 3, expected: { page: 3, firstId: 120 } },
    { why: 'a short page tells nothing of the next', pages: [[2, [20, 21]]], asked: 3, expected: { page: 2, firstId: 20 } },
    {
      why: 'the nearest earlier page wins',
      pages: [
        [1, [1]],
        [5, [50]],
        [9, [90]],
      ],
      asked: 7,
      expected: { page: 5, firstId: 50 },
    },
    { why: 'later pages are no help', pages: [[9, [90]]], asked: 4, expected: undefined },
    { why: 'an empty page teaches nothing', pages: [[4, []]], asked: 4, expected: undefined },
  ];
  for (const { why, pages, asked, expected } of cases) {
    test(`nearestStart: ${why}`, () => {
      const facts = new FilterFacts(100);
      for (const [page, pageIds] of pages) facts.learnPage(page, pageIds, 100);
      assert.deepEqual(facts.nearestStart(asked), expected);
    });
  }

  test('keeps at most its bound of page starts, but still updates those it has', () => {
    const facts = new FilterFacts(2);
    facts.learnPage(1, [1], 100);
    facts.learnPage(5, [50], 100);
    facts.learnPage(9, [90], 100);
    assert.deepEqual(facts.nearestStart(9), { page: 5, firstId: 50 });
    facts.learnPage(5, [55], 100);
    assert.deepEqual(facts.nearestStart(5), { page: 5, firstId: 55 });
  });
});

describe('ListCache', () => {
  test('the same filters in another order share their facts, within one data version', () => {
    const cache = new ListCache();
    const first = cache.lookup('conversions', 1, 7, query({ utm_source: 'fb', 'amount.gte': '10' }));
    first.total = 42;
    const second = cache.lookup('conversions', 1, 7, query({ 'amount.gte': '10', utm_source: 'fb', page: '3' }));
    assert.equal(second.total, 42);
  });

  test('a newer data version starts afresh', () => {
    const cache = new ListCache();
    cache.lookup('conversions', 1, 7, query({ utm_source: 'fb' })).total = 42;
    assert.equal(cache.lookup('conversions', 1, 8, query({ utm_source: 'fb' })).total, undefined);
  });

  test('a request that read an older version neither sees nor replaces the newer facts', () => {
    const cache = new ListCache();
    cache.lookup('conversions', 1, 8, query({})).total = 50;
    const stale = cache.lookup('conversions', 1, 7, query({}));
    assert.equal(stale.total, undefined);
    stale.total = 40;
    assert.equal(cache.lookup('conversions', 1, 8, query({})).total, 50);
  });

  test('accounts, resources and filters are kept apart', () => {
    const cache = new ListCache();
    cache.lookup('conversions', 1, 1, query({ utm_source: 'fb' })).total = 1;
    assert.equal(cache.lookup('conversions', 2, 1, query({ utm_source: 'fb' })).total, undefined);
    assert.equal(cache.lookup('assets', 1, 1, query({ utm_source: 'fb' })).total, undefined);
    assert.equal(cache.lookup('conversions', 1, 1, query({ utm_source: 'google' })).total, undefined);
    assert.equal(cache.lookup('conversions', 1, 1, query({ 'utm_source.gt': 'fb' })).total, undefined);
  });

  test('forgets the least recently used filter beyond its bound', () => {
    const cache = new ListCache(2);
    cache.lookup('conversions', 1, 1, query({ utm_source: 'a' })).total = 1;
    cache.lookup('conversions', 1, 1, query({ utm_source: 'b' })).total = 2;
    cache.lookup('conversions', 1, 1, query({ utm_source: 'a' })); // a is used again: b is now the oldest
    cache.lookup('conversions', 1, 1, query({ utm_source: 'c' })).total = 3;
    assert.equal(cache.lookup('conversions', 1, 1, query({ utm_source: 'a' })).total, 1);
    assert.equal(cache.lookup('conversions', 1, 1, query({ utm_source: 'b' })).total, undefined);
  });
});

function ids(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, index) => first + index);
}
