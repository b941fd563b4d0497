import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromCsvRecord, IMPORT_COLUMNS, validateConversion } from '../../src/conversions/validate.js';
import { conversionRecord } from '../helpers/fixtures.js';

/**
 * What an import says about a bad row: each problem names the field, says what is wrong with it
 * and what would be right, as the API's 400s do ("currency must be three upper-case letters such
 * as USD"), and holds no value of the row, so that the problems of many rows count by reason.
 */

const { created_at: _createdAt, receipt: _receipt, ...withoutRequired } = conversionRecord();
const FIELDS = IMPORT_COLUMNS.join(', ').replace(/, (\w+)$/, ' and $1');

const PROBLEMS: { record: unknown; says: string[] }[] = [
  { record: withoutRequired, says: ['created_at is required', 'receipt is required'] },
  { record: conversionRecord({ created_at: null }), says: ['created_at must be an RFC 3339 timestamp such as 2026-11-22T11:59:51Z'] },
  { record: conversionRecord({ created_at: 'yesterday' }), says: ['created_at must be an RFC 3339 timestamp such as 2026-11-22T11:59:51Z'] },
  { record: conversionRecord({ created_at: '2026-02-30T00:00:00Z' }), says: ['created_at must be an RFC 3339 timestamp such as 2026-11-22T11:59:51Z'] },
  { record: conversionRecord({ created_at: '2026-11-22T11:59:51' }), says: ['created_at must be an RFC 3339 timestamp such as 2026-11-22T11:59:51Z'] },
  { record: conversionRecord({ created_at: '2026-11-22 11:59:51Z' }), says: ['created_at must be an RFC 3339 timestamp such as 2026-11-22T11:59:51Z'] },
  { record: conversionRecord({ created_at: '2026-11-22T11:59:51 01:00' }), says: ['created_at must be an RFC 3339 timestamp such as 2026-11-22T11:59:51Z'] },
  { record: conversionRecord({ receipt: 5 }), says: ['receipt must be a string'] },
  {
    record: conversionRecord({ cart_integration: 'ClickBank' }),
    says: ['cart_integration must be one of clickbank, stickyio, konnektive, buygoods, digistore or svencart'],
  },
  { record: conversionRecord({ payment_method: 'bitcoin' }), says: ['payment_method must be creditcard or paypal'] },
  { record: conversionRecord({ page_version: 'ab' }), says: ['page_version must be one lower-case letter, a to z'] },
  { record: conversionRecord({ currency: 'usd' }), says: ['currency must be three upper-case letters such as USD'] },
  { record: conversionRecord({ country: 'USA' }), says: ['country must be two upper-case letters such as US'] },
  { record: conversionRecord({ email: 'buyer@' }), says: ['email must be an e-mail address such as buyer@example.com'] },
  ...[{ amount: '19.99' }, { amount: 1e12 + 0.01 }, { amount: -1e300 }].map((field) => ({
    record: conversionRecord(field),
    says: [`amount must be a number such as 19.99, from -1000000000000 to 1000000000000`],
  })),
  {
    record: conversionRecord({ affiliate_payouts: [1, 2e12] }),
    says: ['affiliate_payouts must be a JSON array of at most 100 numbers such as [4.5], each from -1000000000000 to 1000000000000'],
  },
  { record: conversionRecord({ upsell_step: 'second' }), says: ['upsell_step must be a number such as 19.99'] },
  { record: conversionRecord({ mobile: 'yes' }), says: ['mobile must be true or false'] },
  { record: conversionRecord({ utm_source: 7 }), says: ['utm_source must be a string'] },
  ...[1.5, 1e20].map((pageId) => ({
    record: conversionRecord({ page_id: pageId }),
    says: ['page_id must be a whole number such as 42, from -9007199254740991 to 9007199254740991'],
  })),
  ...[{ sku: 'S', price: 1, qty: 1 }, Array.from({ length: 101 }, () => ({ sku: 'S', price: 1, qty: 1 }))].map((products) => ({
    record: conversionRecord({ products }),
    says: ['products must be a JSON array of at most 100 products such as [{"sku":"SKU-1","price":19.99,"qty":1}]'],
  })),
  {
    record: conversionRecord({ products: ['SKU-1'] }),
    says: ['products[0] must be an object of sku, price and qty such as {"sku":"SKU-1","price":19.99,"qty":1}'],
  },
  {
    record: conversionRecord({
      products: [
        { sku: 'S', price: 1, qty: 1 },
        { price: 1, qty: 1 },
      ],
    }),
    says: ['products[1].sku is required'],
  },
  {
    record: conversionRecord({ products: [{ sku: 's'.repeat(2049), price: 1, qty: 1 }] }),
    says: ['products[0].sku must be a string of at most 2048 characters'],
  },
  {
    record: conversionRecord({ products: [{ sku: 'S', price: '1.00', qty: 1 }] }),
    says: ['products[0].price must be a number such as 19.99, from -1000000000000 to 1000000000000'],
  },
  ...[-1, 1.5].map((qty) => ({
    record: conversionRecord({ products: [{ sku: 'S', price: 1, qty }] }),
    says: ['products[0].qty must be a whole number of at least 0, such as 1'],
  })),
  {
    record: conversionRecord({ products: [{ sku: 'S', price: 1, qty: 1, colour: 'red' }] }),
    says: ['products[0] has the unknown field colour: the fields of a product are sku, price and qty'],
  },
  ...[[1], Array.from({ length: 101 }, (_, index) => `t${index}`)].map((codes) => ({
    record: conversionRecord({ tracking_codes: codes }),
    says: ['tracking_codes must be a JSON array of at most 100 strings such as ["tc-facebook"]'],
  })),
  {
    record: conversionRecord({ affiliate_payouts: ['1.5'] }),
    says: ['affiliate_payouts must be a JSON array of at most 100 numbers such as [4.5], each from -1000000000000 to 1000000000000'],
  },
  {
    record: conversionRecord({ utm_campaign: 'x'.repeat(2049) }),
    says: ['utm_campaign must be at most 2048 bytes of UTF-8 (a character outside ASCII takes 2 to 4)'],
  },
  { record: conversionRecord({ utm_source: 'a\u0000b' }), says: ['utm_source must not contain the NUL character (U+0000), which text cannot hold'] },
  {
    record: conversionRecord({ tracking_codes: ['ok', '\u0000'] }),
    says: ['every value of tracking_codes must not contain the NUL character (U+0000), which text cannot hold'],
  },
  { record: conversionRecord({ colour: 'red', size: 'L' }), says: [`unknown fields colour, size: the fields of a conversion are ${FIELDS}`] },
  {
    record: [conversionRecord()],
    says: ['the line must be one JSON object, such as {"created_at":"2026-11-22T11:59:51Z","cart_integration":"clickbank","receipt":"R-1001"}'],
  },
  {
    record: conversionRecord({ currency: 'usd', country: 'usa', page_version: 'AB' }),
    says: [
      'page_version must be one lower-case letter, a to z',
      'country must be two upper-case letters such as US',
      'currency must be three upper-case letters such as USD',
    ],
  },
];

for (const { record, says } of PROBLEMS) {
  test(`a bad row is told: ${says.join('; ')}`, () => {
    const checked = validateConversion(record);
    assert.ok('problems' in checked, 'the row is refused');
    assert.deepEqual(checked.problems, says);
  });
}

test('money up to a trillion either way, with any places, is accepted', () => {
  for (const amount of [1e12, -1e12, 19.999, -0.005]) {
    const checked = validateConversion(conversionRecord({ amount, tax_amount: amount, shipping_amount: amount, affiliate_payouts: [amount] }));
    assert.ok('row' in checked, `${amount}: ${JSON.stringify(checked)}`);
  }
});

test('a CSV cell of a list that is not JSON is told what the list must be', () => {
  assert.deepEqual(fromCsvRecord({ tracking_codes: 'a;b' }), {
    problems: ['tracking_codes must be a JSON array of at most 100 strings such as ["tc-facebook"]'],
  });
});

test('CSV numbers in exponent notation, as the export writes those under a millionth, are read as numbers', () => {
  assert.deepEqual(fromCsvRecord({ amount: '1e-7', tax_amount: '-5E-7', upsell_step: '2.5e+1' }), {
    record: { amount: 1e-7, tax_amount: -5e-7, upsell_step: 25 },
  });
});

const ID_CASES: { from: string; id: unknown }[] = [
  { from: "acds's own export", id: 1234 },
  { from: "another system's export", id: 'ord_8f3a' },
  { from: 'an export that writes null', id: null },
];
for (const { from, id } of ID_CASES) {
  test(`an id field (${from}) is accepted and ignored: the row is the one without it, and says it carried one`, () => {
    const record = conversionRecord({ receipt: 'R-ID' });
    const withId = validateConversion({ id, ...record });
    const withoutId = validateConversion(record);
    assert.ok('row' in withId && 'row' in withoutId);
    assert.deepEqual(withId.row, withoutId.row);
    assert.equal(withId.ignoredId, true);
    assert.equal(withoutId.ignoredId, false);
  });
}

test('text holding half a character (a lone surrogate) is kept with U+FFFD in its place, in the entry as in the row', () => {
  const checked = validateConversion(
    conversionRecord({ first_name: 'Ana\ud800', tracking_codes: ['tc-\udc00'], products: [{ sku: 'S\ud83d', price: 1, qty: 1 }] }),
  );
  assert.ok('row' in checked);
  assert.ok(!checked.row.entry_json.includes('\\ud'), checked.row.entry_json);
  const entry = JSON.parse(checked.row.entry_json);
  assert.equal(entry.first_name, 'Ana\uFFFD');
  assert.deepEqual(entry.tracking_codes, ['tc-\uFFFD']);
  assert.equal(entry.products[0].sku, 'S\uFFFD');
  // A whole character outside the BMP (two halves together) is kept as it is.
  const whole = validateConversion(conversionRecord({ first_name: 'Ümit 😀' }));
  assert.ok('row' in whole);
  assert.equal(JSON.parse(whole.row.entry_json).first_name, 'Ümit 😀');
});
