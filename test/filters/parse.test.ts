import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assetCatalogue } from '../../src/assets/schema.js';
import { conversionCatalogue } from '../../src/conversions/schema.js';
import { AppError } from '../../src/errors.js';
import { MAX_LIST_VALUES, MAX_VALUE_LENGTH, parseListQuery, type Condition } from '../../src/filters/parse.js';

/** The list query parser alone (docs/api.md, "Listing" and "Filters"): what each form means, and what each mistake is told. */

const DAY = Date.UTC(2026, 2, 15) / 1000; // 2026-03-15T00:00:00Z
const conditionOf = (query: Record<string, string>) => parseListQuery(query, conversionCatalogue).filters.map((f) => f.condition);

describe('filters that parse', () => {
  const cases: [string, Record<string, string>, Condition[]][] = [
    ['money equality is exact', { amount: '19.99' }, [{ kind: 'compare', op: '=', value: 19.99 }]],
    ['integer comparison', { 'page_id.gte': '5' }, [{ kind: 'compare', op: '>=', value: 5 }]],
    ['negative integer', { 'upsell_step.lt': '-1' }, [{ kind: 'compare', op: '<', value: -1 }]],
    ['between is inclusive of both ends', { 'amount.between': '1,2.5' }, [{ kind: 'range', from: 1, to: 2.5 }]],
    ['string equality keeps commas and quotes', { utm_campaign: 'a,"b"' }, [{ kind: 'compare', op: '=', value: 'a,"b"' }]],
    ['in with CSV quoting', { 'utm_source.in': '"a,b",c,"say ""hi"""' }, [{ kind: 'in', values: ['a,b', 'c', 'say "hi"'] }]],
    ['in with an empty value', { 'utm_source.in': 'x,""' }, [{ kind: 'in', values: ['x', ''] }]],
    [
      'in without quotes splits at every comma, keeping spaces and empty values',
      { 'utm_source.in': ' a,,b ,' },
      [{ kind: 'in', values: [' a', '', 'b ', ''] }],
    ],
    ['boolean t', { mobile: 't' }, [{ kind: 'compare', op: '=', value: true }]],
    ['boolean false', { mobile: 'false' }, [{ kind: 'compare', op: '=', value: false }]],
    ['an instant is that second', { created_at: '2026-03-15T12:00:00Z' }, [{ kind: 'compare', op: '=', value: DAY + 12 * 3600 }]],
    ['an offset is applied', { created_at: '2026-03-15T14:00:00+02:00' }, [{ kind: 'compare', op: '=', value: DAY + 12 * 3600 }]],
    ['a date is its whole UTC day', { created_at: '2026-03-15' }, [{ kind: 'range', from: DAY, to: DAY + 86_399 }]],
    ['before a date is before its first second', { 'created_at.lt': '2026-03-15' }, [{ kind: 'compare', op: '<', value: DAY }]],
    ['after a date is after its last second', { 'created_at.gt': '2026-03-15' }, [{ kind: 'compare', op: '>', value: DAY + 86_399 }]],
    ['up to a date includes all of it', { 'created_at.lte': '2026-03-15' }, [{ kind: 'compare', op: '<=', value: DAY + 86_399 }]],
    ['an array column matches one element', { tracking_codes: 'x' }, [{ kind: 'compare', op: '=', value: 'x' }]],
    [
      'several filters are all kept',
      { amount: '5', currency: 'USD' },
      [
        { kind: 'compare', op: '=', value: 5 },
        { kind: 'compare', op: '=', value: 'USD' },
      ],
    ],
  ];
  for (const [behaviour, query, expected] of cases) {
    test(behaviour, () => assert.deepEqual(conditionOf(query), expected));
  }

  test('page defaults to 1 and takes any whole number from 1', () => {
    assert.equal(parseListQuery({}, conversionCatalogue).page, 1);
    assert.equal(parseListQuery({ page: '7' }, conversionCatalogue).page, 7);
  });

  test('asset columns parse through the same engine', () => {
    const { filters } = parseListQuery({ folder: 'landing/img', image: 't', 'width.gte': '100' }, assetCatalogue);
    assert.deepEqual(
      filters.map((f) => f.condition),
      [
        { kind: 'compare', op: '=', value: 'landing/img' },
        { kind: 'compare', op: '=', value: true },
        { kind: 'compare', op: '>=', value: 100 },
      ],
    );
  });
});

describe('mistakes get a 400 that names them', () => {
  const cases: [string, Record<string, string | string[]>, RegExp][] = [
    ['page 0', { page: '0' }, /page must be a whole number of at least 1/],
    ['page not a number', { page: 'abc' }, /page must be a whole number/],
    ['page with a fraction', { page: '1.5' }, /page must be a whole number/],
    ['page beyond safe integers', { page: '9007199254740993' }, /page must be a whole number/],
    ['an unknown column', { colour: 'red' }, /colour is not a known parameter/],
    ['an unknown modifier', { 'amount.ne': '5' }, /amount\.ne/],
    ['a modifier a boolean does not take', { 'mobile.in': 't,f' }, /mobile is a boolean column/],
    ['a word for a number', { amount: 'cheap' }, /amount has the invalid value "cheap"/],
    ['a fraction for an integer', { page_id: '1.5' }, /page_id/],
    ['a boolean that is not one', { mobile: 'yes' }, /mobile/],
    ['an impossible date', { created_at: '2026-02-30' }, /created_at/],
    ['between with one value', { 'amount.between': '1' }, /amount\.between/],
    ['in over two lines', { 'utm_source.in': 'a\nb' }, /utm_source\.in must be one line/],
    ['in with an unbalanced quote', { 'utm_source.in': 'a,"b' }, /utm_source\.in has unbalanced double quotes/],
    ['a repeated key', { amount: ['1', '2'] }, /amount is given more than once/],
    ['a value too long', { utm_source: 'x'.repeat(MAX_VALUE_LENGTH + 1) }, /utm_source/],
    ['too many values in in', { 'utm_source.in': Array.from({ length: MAX_LIST_VALUES + 1 }, (_, i) => `v${i}`).join(',') }, /utm_source\.in/],
  ];
  for (const [mistake, query, message] of cases) {
    test(mistake, () => {
      assert.throws(
        () => parseListQuery(query, conversionCatalogue),
        (error: unknown) => error instanceof AppError && error.statusCode === 400 && message.test(error.message),
      );
    });
  }
});
