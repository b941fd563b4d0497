import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppendOnlyAnswers } from '../../src/db/columnar/answers.js';
import { BoundParams, filtersToDuckDb } from '../../src/db/columnar/filters.js';
import { conversionCatalogue } from '../../src/conversions/schema.js';
import { parseListQuery } from '../../src/filters/parse.js';

describe('AppendOnlyAnswers', () => {
  /** A count of rows above an id that records what it was asked. */
  const counter = (answer: number) => {
    const asked: number[] = [];
    return {
      asked,
      countAbove: async (above: number) => {
        asked.push(above);
        return answer;
      },
    };
  };

  test('a count is topped up by the rows above the id it was counted to, and kept for the new id', async () => {
    const answers = new AppendOnlyAnswers();
    answers.remember('a', 40, 100);
    const { asked, countAbove } = counter(2);
    assert.equal(await answers.count('a', 100, countAbove), 40);
    assert.equal(await answers.count('a', 150, countAbove), 42);
    assert.equal(await answers.count('a', 150, countAbove), 42);
    assert.deepEqual(asked, [100], 'only rows above 100 were counted, once');
  });

  test('no count is known for a key never counted, nor for an older id than the one known', async () => {
    const answers = new AppendOnlyAnswers();
    const { countAbove } = counter(1);
    assert.equal(await answers.count('a', 100, countAbove), undefined);
    answers.remember('a', 40, 100);
    assert.equal(await answers.count('a', 90, countAbove), undefined);
    answers.remember('a', 30, 90);
    assert.equal(await answers.count('a', 100, countAbove), 40, 'an older count does not replace a newer one');
  });

  test('a full page holds for good, a page with room left only until the next row', () => {
    const answers = new AppendOnlyAnswers();
    answers.rememberPage('a', 1, [1, 2, 3], 3, 10);
    answers.rememberPage('a', 2, [4, 5], 3, 10);
    assert.deepEqual(answers.page('a', 1, 500), [1, 2, 3]);
    assert.deepEqual(answers.page('a', 2, 10), [4, 5]);
    assert.equal(answers.page('a', 2, 11), undefined);
    assert.equal(answers.page('b', 1, 10), undefined);
  });

  test('forgets the least recently used beyond its bounds', async () => {
    const answers = new AppendOnlyAnswers(2, 2);
    answers.remember('a', 1, 10);
    answers.remember('b', 2, 10);
    await answers.count('a', 10, counter(0).countAbove);
    answers.remember('c', 3, 10);
    assert.equal(await answers.count('b', 10, counter(0).countAbove), undefined);
    assert.equal(await answers.count('a', 10, counter(0).countAbove), 1);
  });
});

describe('filters in DuckDB', () => {
  const CASES: { query: Record<string, string>; sql: string; values: unknown[] }[] = [
    { query: {}, sql: 'TRUE', values: [] },
    { query: { utm_source: 'google' }, sql: 'utm_source = $2::VARCHAR', values: ['google'] },
    // Whole cents are compared by the amount's rank (number-rank.ts), other numbers as doubles.
    { query: { 'amount.gte': '19.99' }, sql: 'amount_rank >= $2::BIGINT', values: [3998] },
    { query: { 'amount.in': '5,19.99' }, sql: 'list_contains($2::BIGINT[], amount_rank)', values: [[1000, 3998]] },
    { query: { 'amount.gte': '19.999' }, sql: 'amount >= $2::DOUBLE', values: [19.999] },
    { query: { 'tax_amount.between': '1,2.005' }, sql: 'tax_amount BETWEEN $2::DOUBLE AND $3::DOUBLE', values: [1, 2.005] },
    { query: { 'page_id.between': '3,9' }, sql: 'page_id BETWEEN $2::BIGINT AND $3::BIGINT', values: [3, 9] },
    { query: { mobile: 'true' }, sql: 'mobile = $2::TINYINT', values: [1] },
    { query: { 'cart_integration.in': 'clickbank,buygoods' }, sql: 'list_contains($2::VARCHAR[], cart_integration)', values: [['clickbank', 'buygoods']] },
    {
      query: { tracking_codes: 'a', 'tracking_codes.gt': 'b' },
      sql: 'id IN (SELECT conversion_id FROM conversion_tracking_codes WHERE account_id = $1 AND code = $2::VARCHAR INTERSECT SELECT conversion_id FROM conversion_tracking_codes WHERE account_id = $1 AND code > $3::VARCHAR)',
      values: ['a', 'b'],
    },
  ];
  for (const { query, sql, values } of CASES) {
    test(`${JSON.stringify(query)} is ${sql}, every value a parameter`, () => {
      const params = new BoundParams(7);
      assert.equal(filtersToDuckDb(parseListQuery(query, conversionCatalogue).filters, params, '$1'), sql);
      const bound = params.values.slice(1).map((value) => (typeof value === 'object' && value !== null && 'items' in value ? value.items : value));
      assert.deepEqual(bound, values);
    });
  }
});
