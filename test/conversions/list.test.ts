import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine } from '../helpers/database.js';
import { CONVERSION_FIELDS, conversionRecord, insertConversions } from '../helpers/fixtures.js';

/**
 * GET /api/v1/conversions: every filter form on every column type, pagination, the 400s of a
 * bad filter or page, account isolation and the entry's fields, as docs/api.md ("Listing",
 * "Filters", "Conversions", "Errors") has them. The fixture is a handful of hand-written
 * records whose expected results are stated per query; results are compared as sets of receipts.
 */

const ENTRY_FIELDS = [...CONVERSION_FIELDS].sort();

/** The filterable columns of conversions (docs/api.md, "Filters"); the buyer's country is `country`. */
const FILTERABLE = [
  'id',
  'created_at',
  'cart_integration',
  'receipt',
  'original_receipt',
  'amount',
  'tax_amount',
  'shipping_amount',
  'user_id',
  'page_id',
  'page_version',
  'upsell_path',
  'upsell_step',
  'country',
  'mobile',
  'affiliate',
  'vendor',
  'tracking_codes',
  'referrer_name',
  'referrer_medium',
  'joint_venture_order',
  'currency',
  'hostname',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'first_name',
  'last_name',
  'zip_code',
  'payment_method',
];

/**
 * The main account's records, inserted in this order (so ids ascend A to H):
 *
 * | rec | created_at (UTC)     | cart       | receipt | amount | tax  | page_id | step | country | mobile | tracking_codes      | utm_campaign | payment    | user_id | first_name |
 * | A   | 2026-03-01T00:00:00Z | clickbank  | A       | 19.99  | 1.5  | 1001    | 0    | US      | true   | fb-spring, google   | spring,sale  | creditcard | u1      | Ada        |
 * | B   | 2026-03-01T23:59:59Z | stickyio   | B       | 5      | 0.5  | 1002    | 1    | DE      | false  | fb                  | launch       | paypal     | ''      | Bob        |
 * | C   | 2026-03-02T00:00:00Z | clickbank  | C       | 100    | null | null    | 2.5  | null    | null   |                     | null         | null       | null    | Zoë        |
 * | D   | 2026-02-28T23:59:59Z | konnektive | D       | 19.98  | 1.5  | -5      | 1    | FR      | false  | spring-fb, "x,y"    | say "hi"     | creditcard | u2      | Dan        |
 * | E   | 2026-03-15T10:30:00Z | buygoods   | E,1     | 0      | 0    | 1001    | 0    | US      | true   | google, fb          | spring       | creditcard | u1      | Eve        |
 * | F   | 2026-03-31T23:59:59Z | digistore  | F       | -3     | 0    | 2000    | 0    | GB      | true   |                     | Spring       | creditcard | u3      | ada        |
 * | G   | 2026-04-01T00:00:00Z | svencart   | G       | 1000.5 | 1.5  | 3000    | 0    | US      | false  |                     | launch       | paypal     | u3      | Gus        |
 * | H   | 2025-12-31T12:00:00Z | svencart   | H       | only the three required fields: everything else null or []                                           |
 */
const RECORD_A = conversionRecord({
  created_at: '2026-03-01T00:00:00Z',
  cart_integration: 'clickbank',
  receipt: 'A',
  original_receipt: 'A0',
  amount: 19.99,
  tax_amount: 1.5,
  shipping_amount: 4.95,
  page_id: 1001,
  upsell_step: 0,
  country: 'US',
  mobile: true,
  tracking_codes: ['fb-spring', 'google'],
  utm_campaign: 'spring,sale',
  payment_method: 'creditcard',
  user_id: 'u1',
  first_name: 'Ada',
  currency: 'USD',
  page_version: 'b',
  joint_venture_order: 'JV-7',
  products: [
    { sku: 'SKU-1', price: 19.99, qty: 1 },
    { sku: 'GIFT', price: 0, qty: 0 },
  ],
  affiliate_payouts: [1.25, 0.1, 3],
});
const RECORDS = [
  RECORD_A,
  conversionRecord({
    created_at: '2026-03-01T23:59:59Z',
    cart_integration: 'stickyio',
    receipt: 'B',
    amount: 5,
    tax_amount: 0.5,
    page_id: 1002,
    upsell_step: 1,
    country: 'DE',
    mobile: false,
    tracking_codes: ['fb'],
    utm_campaign: 'launch',
    payment_method: 'paypal',
    user_id: '',
    first_name: 'Bob',
    currency: 'EUR',
  }),
  conversionRecord({
    created_at: '2026-03-02T00:00:00Z',
    cart_integration: 'clickbank',
    receipt: 'C',
    amount: 100,
    tax_amount: null,
    page_id: null,
    upsell_step: 2.5,
    country: null,
    mobile: null,
    tracking_codes: [],
    utm_campaign: null,
    payment_method: null,
    user_id: null,
    first_name: 'Zoë',
    currency: null,
  }),
  conversionRecord({
    created_at: '2026-02-28T23:59:59Z',
    cart_integration: 'konnektive',
    receipt: 'D',
    amount: 19.98,
    tax_amount: 1.5,
    page_id: -5,
    upsell_step: 1,
    country: 'FR',
    mobile: false,
    tracking_codes: ['spring-fb', 'x,y'],
    utm_campaign: 'say "hi"',
    payment_method: 'creditcard',
    user_id: 'u2',
    first_name: 'Dan',
    currency: 'EUR',
  }),
  conversionRecord({
    // an offset and a fraction: stored as the UTC second 2026-03-15T10:30:00Z
    created_at: '2026-03-15T11:30:00.750+01:00',
    cart_integration: 'buygoods',
    receipt: 'E,1',
    amount: 0,
    tax_amount: 0,
    page_id: 1001,
    upsell_step: 0,
    country: 'US',
    mobile: true,
    tracking_codes: ['google', 'fb'],
    utm_campaign: 'spring',
    payment_method: 'creditcard',
    user_id: 'u1',
    first_name: 'Eve',
    currency: 'USD',
  }),
  conversionRecord({
    created_at: '2026-03-31T23:59:59Z',
    cart_integration: 'digistore',
    receipt: 'F',
    amount: -3,
    tax_amount: 0,
    page_id: 2000,
    upsell_step: 0,
    country: 'GB',
    mobile: true,
    tracking_codes: [],
    utm_campaign: 'Spring',
    payment_method: 'creditcard',
    user_id: 'u3',
    first_name: 'ada',
    currency: 'GBP',
  }),
  conversionRecord({
    created_at: '2026-04-01T00:00:00Z',
    cart_integration: 'svencart',
    receipt: 'G',
    amount: 1000.5,
    tax_amount: 1.5,
    page_id: 3000,
    upsell_step: 0,
    country: 'US',
    mobile: false,
    tracking_codes: [],
    utm_campaign: 'launch',
    payment_method: 'paypal',
    user_id: 'u3',
    first_name: 'Gus',
    currency: 'USD',
  }),
  { created_at: '2025-12-31T12:00:00Z', cart_integration: 'svencart', receipt: 'H' },
];
const ALL = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'];

/**
 * Another account whose data overlaps the main one: the same carts and receipts A and B with
 * other values, and values that the main account's filters below would match.
 */
const OTHER_RECORDS = [
  conversionRecord({
    created_at: '2026-03-01T00:00:00Z',
    cart_integration: 'clickbank',
    receipt: 'A',
    amount: 7,
    country: 'US',
    mobile: true,
    tracking_codes: ['fb', 'google'],
  }),
  conversionRecord({
    created_at: '2026-03-01T12:00:00Z',
    cart_integration: 'stickyio',
    receipt: 'B',
    amount: 19.99,
    country: 'DE',
    mobile: false,
    tracking_codes: ['fb'],
  }),
  conversionRecord({
    created_at: '2026-03-15T10:30:00Z',
    cart_integration: 'buygoods',
    receipt: 'O1',
    amount: 19.99,
    country: 'US',
    mobile: true,
    tracking_codes: ['google'],
  }),
];

type Params = [string, string][];

/** A query string from key/value pairs, each percent-encoded. */
const qs = (params: Params) => params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

interface FilterCase {
  /** What the row proves, for the test name. */
  says: string;
  params: Params;
  expected: string[];
}

const FILTER_CASES: FilterCase[] = [
  // string equality: literal and case-sensitive; the plain form takes commas and quotes literally
  { says: 'string equality', params: [['country', 'US']], expected: ['A', 'E', 'G'] },
  { says: 'string equality is case-sensitive', params: [['country', 'us']], expected: [] },
  { says: 'string equality on the cart', params: [['cart_integration', 'clickbank']], expected: ['A', 'C'] },
  { says: 'string equality on payment_method', params: [['payment_method', 'paypal']], expected: ['B', 'G'] },
  { says: 'the plain form takes a comma literally', params: [['receipt', 'E,1']], expected: ['E'] },
  { says: 'the plain form takes a comma literally (utm_campaign)', params: [['utm_campaign', 'spring,sale']], expected: ['A'] },
  { says: 'the plain form takes quotes literally', params: [['utm_campaign', 'say "hi"']], expected: ['D'] },
  { says: 'equality matches the whole value, not a prefix', params: [['utm_campaign', 'spring']], expected: ['E'] },
  { says: 'an empty value matches the empty string and not null', params: [['user_id', '']], expected: ['B'] },
  { says: 'non-ASCII text matches exactly', params: [['first_name', 'Zoë']], expected: ['C'] },
  {
    says: 'string equality on original_receipt and joint_venture_order',
    params: [
      ['original_receipt', 'A0'],
      ['joint_venture_order', 'JV-7'],
    ],
    expected: ['A'],
  },
  // string .in with CSV quoting
  { says: 'string in', params: [['country.in', 'DE,FR']], expected: ['B', 'D'] },
  { says: 'string in with one value', params: [['country.in', 'US']], expected: ['A', 'E', 'G'] },
  { says: 'in with a quoted value holding a comma', params: [['utm_campaign.in', '"spring,sale",launch']], expected: ['A', 'B', 'G'] },
  { says: 'in without quotes splits at the comma', params: [['utm_campaign.in', 'spring,sale']], expected: ['E'] },
  { says: 'in with "" for a quote inside a quoted value', params: [['utm_campaign.in', '"say ""hi""",Spring']], expected: ['D', 'F'] },
  { says: 'in with a quoted receipt holding a comma', params: [['receipt.in', '"E,1",A']], expected: ['A', 'E'] },
  { says: 'in never matches null', params: [['payment_method.in', 'creditcard,paypal']], expected: ['A', 'B', 'D', 'E', 'F', 'G'] },
  // string comparisons by code point
  { says: 'string gt', params: [['country.gt', 'FR']], expected: ['A', 'E', 'F', 'G'] },
  { says: 'string gte', params: [['country.gte', 'FR']], expected: ['A', 'D', 'E', 'F', 'G'] },
  { says: 'string lt', params: [['country.lt', 'FR']], expected: ['B'] },
  { says: 'string lte', params: [['country.lte', 'DE']], expected: ['B'] },
  { says: 'string between is inclusive at both ends', params: [['country.between', 'DE,GB']], expected: ['B', 'D', 'F'] },
  { says: 'string between with a > b matches nothing', params: [['country.between', 'GB,DE']], expected: [] },
  { says: 'strings compare by code point: lower case after upper case', params: [['first_name.gt', 'Zz']], expected: ['F'] },
  { says: 'strings compare by code point: "ada" is not before "B"', params: [['first_name.lt', 'B']], expected: ['A'] },
  // integers
  { says: 'integer equality', params: [['page_id', '1001']], expected: ['A', 'E'] },
  { says: 'integer equality with a negative value', params: [['page_id', '-5']], expected: ['D'] },
  { says: 'integer gt', params: [['page_id.gt', '1001']], expected: ['B', 'F', 'G'] },
  { says: 'integer gte', params: [['page_id.gte', '1002']], expected: ['B', 'F', 'G'] },
  { says: 'integer lt', params: [['page_id.lt', '1002']], expected: ['A', 'D', 'E'] },
  { says: 'integer lte', params: [['page_id.lte', '1001']], expected: ['A', 'D', 'E'] },
  { says: 'integer between', params: [['page_id.between', '1001,2000']], expected: ['A', 'B', 'E', 'F'] },
  { says: 'integer in', params: [['page_id.in', '1002,3000']], expected: ['B', 'G'] },
  // money and other numbers
  { says: 'exact money 19.99', params: [['amount', '19.99']], expected: ['A'] },
  { says: 'exact money 19.98 is not 19.99', params: [['amount', '19.98']], expected: ['D'] },
  { says: 'a whole amount', params: [['amount', '5']], expected: ['B'] },
  { says: 'trailing zeros do not matter', params: [['amount', '5.00']], expected: ['B'] },
  { says: 'a negative amount', params: [['amount', '-3']], expected: ['F'] },
  { says: 'money gt', params: [['amount.gt', '19.98']], expected: ['A', 'C', 'G'] },
  { says: 'money gte', params: [['amount.gte', '19.98']], expected: ['A', 'C', 'D', 'G'] },
  { says: 'money lt', params: [['amount.lt', '0']], expected: ['F'] },
  { says: 'money lte', params: [['amount.lte', '0']], expected: ['E', 'F'] },
  { says: 'money between is inclusive at both ends', params: [['amount.between', '5,19.99']], expected: ['A', 'B', 'D'] },
  { says: 'money in', params: [['amount.in', '0,1000.5,-3']], expected: ['E', 'F', 'G'] },
  { says: 'tax_amount equality', params: [['tax_amount', '0']], expected: ['E', 'F'] },
  { says: 'shipping_amount equality', params: [['shipping_amount', '4.95']], expected: ['A'] },
  { says: 'a fractional upsell_step', params: [['upsell_step', '2.5']], expected: ['C'] },
  { says: 'upsell_step gt', params: [['upsell_step.gt', '0.5']], expected: ['B', 'C', 'D'] },
  // booleans
  { says: 'boolean t', params: [['mobile', 't']], expected: ['A', 'E', 'F'] },
  { says: 'boolean true', params: [['mobile', 'true']], expected: ['A', 'E', 'F'] },
  { says: 'boolean f (null is not false)', params: [['mobile', 'f']], expected: ['B', 'D', 'G'] },
  { says: 'boolean false (null is not false)', params: [['mobile', 'false']], expected: ['B', 'D', 'G'] },
  // timestamps: a date is its whole UTC day, a full timestamp its second
  { says: 'a date matches its whole UTC day', params: [['created_at', '2026-03-01']], expected: ['A', 'B'] },
  { says: 'a full instant matches to the second', params: [['created_at', '2026-03-01T00:00:00Z']], expected: ['A'] },
  { says: 'a timestamp without an offset is UTC', params: [['created_at', '2026-03-01T00:00:00']], expected: ['A'] },
  { says: 'a timestamp with a + offset', params: [['created_at', '2026-03-01T01:00:00+01:00']], expected: ['A'] },
  { says: 'a timestamp with a - offset', params: [['created_at', '2026-02-28T19:00:00-05:00']], expected: ['A'] },
  { says: 'a stored offset and fraction were normalised to the UTC second', params: [['created_at', '2026-03-15T10:30:00Z']], expected: ['E'] },
  { says: 'the next second does not match', params: [['created_at', '2026-03-15T10:30:01Z']], expected: [] },
  { says: 'date gt means after the end of the day', params: [['created_at.gt', '2026-03-01']], expected: ['C', 'E', 'F', 'G'] },
  { says: 'date gte means from the start of the day', params: [['created_at.gte', '2026-03-01']], expected: ['A', 'B', 'C', 'E', 'F', 'G'] },
  { says: 'date lt means before the start of the day', params: [['created_at.lt', '2026-03-01']], expected: ['D', 'H'] },
  { says: 'date lte means up to the end of the day', params: [['created_at.lte', '2026-03-01']], expected: ['A', 'B', 'D', 'H'] },
  { says: 'instant gt excludes that second', params: [['created_at.gt', '2026-03-01T00:00:00Z']], expected: ['B', 'C', 'E', 'F', 'G'] },
  { says: 'instant lte includes that second', params: [['created_at.lte', '2026-03-01T23:59:59Z']], expected: ['A', 'B', 'D', 'H'] },
  {
    says: 'date between spans start of the first to end of the last day',
    params: [['created_at.between', '2026-03-01,2026-03-31']],
    expected: ['A', 'B', 'C', 'E', 'F'],
  },
  { says: 'instant between is inclusive', params: [['created_at.between', '2026-03-01T00:00:00Z,2026-03-02T00:00:00Z']], expected: ['A', 'B', 'C'] },
  { says: 'date between with a > b matches nothing', params: [['created_at.between', '2026-03-31,2026-03-01']], expected: [] },
  {
    says: 'a month as a gte/lt range',
    params: [
      ['created_at.gte', '2026-03-01'],
      ['created_at.lt', '2026-04-01'],
    ],
    expected: ['A', 'B', 'C', 'E', 'F'],
  },
  { says: 'dates in in stand for their whole day', params: [['created_at.in', '2026-03-01,2026-04-01']], expected: ['A', 'B', 'G'] },
  { says: 'a date and an instant mixed in one in', params: [['created_at.in', '2026-03-01,2026-03-15T10:30:00Z']], expected: ['A', 'B', 'E'] },
  { says: 'instants in in match to the second', params: [['created_at.in', '2026-03-02T00:00:00Z,2026-03-15T10:30:00Z']], expected: ['C', 'E'] },
  // array column: one element matches exactly, never a substring
  { says: 'an array element matches exactly', params: [['tracking_codes', 'fb']], expected: ['B', 'E'] },
  { says: 'an array element matches in any position', params: [['tracking_codes', 'google']], expected: ['A', 'E'] },
  { says: 'an array filter does not match a prefix of an element', params: [['tracking_codes', 'goo']], expected: [] },
  { says: 'an array filter does not match a part of an element', params: [['tracking_codes', 'spring']], expected: [] },
  { says: 'array in matches any element, each row once', params: [['tracking_codes.in', 'fb,google']], expected: ['A', 'B', 'E'] },
  { says: 'array in with a quoted element holding a comma', params: [['tracking_codes.in', '"x,y"']], expected: ['D'] },
  { says: 'the plain array filter takes a comma literally', params: [['tracking_codes', 'x,y']], expected: ['D'] },
  { says: 'an element with a comma is not split', params: [['tracking_codes', 'x']], expected: [] },
  { says: 'array gt holds when any element is greater', params: [['tracking_codes.gt', 'g']], expected: ['A', 'D', 'E'] },
  { says: 'array lte holds when any element is at most the value', params: [['tracking_codes.lte', 'fb']], expected: ['B', 'E'] },
  // null never satisfies a filter
  { says: 'a comparison never matches null (string)', params: [['country.lt', 'ZZ']], expected: ['A', 'B', 'D', 'E', 'F', 'G'] },
  { says: 'a comparison never matches null (integer)', params: [['page_id.gt', '-1000000']], expected: ['A', 'B', 'D', 'E', 'F', 'G'] },
  { says: 'a comparison never matches null (money)', params: [['tax_amount.gte', '0']], expected: ['A', 'B', 'D', 'E', 'F', 'G'] },
  { says: 'gte the empty string matches every non-null string', params: [['utm_campaign.gte', '']], expected: ['A', 'B', 'D', 'E', 'F', 'G'] },
  { says: 'between never matches null', params: [['upsell_step.between', '-100,100']], expected: ['A', 'B', 'C', 'D', 'E', 'F', 'G'] },
  // several filters: AND
  {
    says: 'two filters combine with AND',
    params: [
      ['country', 'US'],
      ['mobile', 't'],
    ],
    expected: ['A', 'E'],
  },
  {
    says: 'three filters combine with AND',
    params: [
      ['country', 'US'],
      ['mobile', 't'],
      ['amount.gt', '10'],
    ],
    expected: ['A'],
  },
  {
    says: 'a date and an array element combine with AND',
    params: [
      ['created_at', '2026-03-01'],
      ['tracking_codes', 'google'],
    ],
    expected: ['A'],
  },
  {
    says: 'two filters on one array column both hold',
    params: [
      ['tracking_codes', 'fb'],
      ['tracking_codes.in', 'google'],
    ],
    expected: ['E'],
  },
  {
    says: 'in and a comparison combine with AND',
    params: [
      ['country.in', 'US,DE'],
      ['amount.lt', '10'],
    ],
    expected: ['B', 'E'],
  },
  {
    says: 'contradictory filters match nothing',
    params: [
      ['country', 'US'],
      ['payment_method', 'paypal'],
      ['mobile', 't'],
    ],
    expected: [],
  },
];

interface BadCase {
  says: string;
  /** The raw query string, already encoded. */
  query: string;
  /** What the message must name. */
  names: string;
}

const BAD_FILTERS: BadCase[] = [
  { says: 'an unknown column', query: 'colour=red', names: 'colour' },
  { says: 'the original interface\'s name "the service" (the column is country)', query: 'the%20service=US', names: 'the service' },
  { says: 'a column of the entry that is not filterable (email)', query: 'email=buyer%40example.com', names: 'email' },
  { says: 'a column of the entry that is not filterable (products)', query: 'products=SKU-1', names: 'products' },
  { says: 'a column of the entry that is not filterable (referrer)', query: 'referrer=x', names: 'referrer' },
  { says: 'a parameter named after an object property (__proto__)', query: '__proto__=x', names: '__proto__' },
  { says: 'a parameter named after an object property (constructor)', query: 'constructor=x', names: 'constructor' },
  { says: 'a bracketed array-style key', query: 'country%5B%5D=US', names: 'country[]' },
  { says: 'an unknown parameter that looks like paging', query: 'per_page=10', names: 'per_page' },
  { says: 'a misspelt page', query: 'pgae=2', names: 'pgae' },
  { says: 'a negation modifier ne (there is none)', query: 'country.ne=US', names: 'country.ne' },
  { says: 'a negation modifier not', query: 'country.not=US', names: 'country.not' },
  { says: 'an unknown modifier eq', query: 'amount.eq=5', names: 'amount.eq' },
  { says: 'a modifier in the wrong case', query: 'amount.GT=5', names: 'amount.GT' },
  { says: 'a modifier with a trailing segment', query: 'amount.gt.x=5', names: 'amount.gt.x' },
  { says: 'an empty modifier', query: 'amount.=5', names: 'amount.' },
  { says: 'a modifier on a boolean column (in)', query: 'mobile.in=t,f', names: 'mobile.in' },
  { says: 'a modifier on a boolean column (gt)', query: 'mobile.gt=f', names: 'mobile.gt' },
  { says: 'a boolean that is not t/f/true/false', query: 'mobile=yes', names: 'mobile' },
  { says: 'a boolean written 1', query: 'mobile=1', names: 'mobile' },
  { says: 'an empty boolean', query: 'mobile=', names: 'mobile' },
  { says: 'a repeated key', query: 'country=US&country=DE', names: 'country' },
  { says: 'a repeated modifier key', query: 'amount.gt=1&amount.gt=2', names: 'amount.gt' },
  { says: 'a fraction for an integer column', query: 'page_id=1.5', names: 'page_id' },
  { says: 'text for an integer column', query: 'page_id=abc', names: 'page_id' },
  { says: 'an integer beyond the safe range', query: 'id=99999999999999999999', names: 'id' },
  { says: 'an empty integer', query: 'id=', names: 'id' },
  { says: 'text for a money column', query: 'amount=abc', names: 'amount' },
  { says: 'a comma decimal for a money column', query: 'amount=19%2C99', names: 'amount' },
  { says: 'NaN for a money column', query: 'amount=NaN', names: 'amount' },
  { says: 'Infinity for a money column', query: 'amount.lt=Infinity', names: 'amount.lt' },
  { says: 'an empty number', query: 'amount=', names: 'amount' },
  { says: 'a bad value inside in', query: 'page_id.in=1,x', names: 'page_id.in' },
  { says: 'an impossible date', query: 'created_at=2026-02-30', names: 'created_at' },
  { says: 'a month 13', query: 'created_at.gte=2026-13-01', names: 'created_at.gte' },
  { says: 'a word for a date', query: 'created_at=yesterday', names: 'created_at' },
  { says: 'an hour 25', query: 'created_at=2026-03-01T25:00:00Z', names: 'created_at' },
  { says: 'a date in another format', query: 'created_at=03%2F01%2F2026', names: 'created_at' },
  { says: 'an epoch number for a timestamp', query: 'created_at.gt=1772323200', names: 'created_at.gt' },
  { says: 'between with one value', query: 'created_at.between=2026-03-01', names: 'created_at.between' },
  { says: 'between with three values', query: 'amount.between=1,2,3', names: 'amount.between' },
  { says: 'between with a bad date', query: 'created_at.between=2026-03-01,2026-02-30', names: 'created_at.between' },
  { says: 'an empty in', query: 'country.in=', names: 'country.in' },
  { says: 'unbalanced quotes in in', query: 'utm_campaign.in=%22spring,sale', names: 'utm_campaign.in' },
  { says: 'a string value over 2,048 characters', query: `country=${'U'.repeat(2049)}`, names: 'country' },
  { says: 'an array value over 2,048 characters', query: `tracking_codes=${'t'.repeat(2049)}`, names: 'tracking_codes' },
  { says: 'a string value with the NUL character (PostgreSQL cannot compare it)', query: 'utm_source=a%00b', names: 'utm_source' },
  { says: 'an in value with the NUL character', query: 'utm_source.in=a,%00', names: 'utm_source.in' },
  { says: 'an array value with the NUL character', query: 'tracking_codes=%00', names: 'tracking_codes' },
  { says: 'more than 100 values in in', query: `page_id.in=${Array.from({ length: 101 }, (_, i) => i).join(',')}`, names: 'page_id.in' },
  { says: 'a bad filter beside a good one', query: 'country=US&amount=abc', names: 'amount' },
];

const BAD_PAGES: { says: string; query: string }[] = [
  { says: 'page 0', query: 'page=0' },
  { says: 'a negative page', query: 'page=-1' },
  { says: 'a word', query: 'page=abc' },
  { says: 'a fraction', query: 'page=1.5' },
  { says: 'an empty page', query: 'page=' },
  { says: 'a page with a sign', query: 'page=%2B1' },
  { says: 'a page with a space', query: 'page=%201' },
  { says: 'a page in exponent notation', query: 'page=1e2' },
  { says: 'a page given twice', query: 'page=1&page=2' },
  { says: 'a page beyond the safe integer range', query: 'page=99999999999999999999' },
];

/** Receipts, in the order served. */
const receiptsOf = (body: { entries: { receipt: string }[] }) => body.entries.map((entry) => entry.receipt);
const sorted = (values: string[]) => [...values].sort();

function assertJsonError(response: LightMyRequestResponse, status: number): string {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/json; charset=utf-8$/);
  const message: unknown = response.json();
  assert.equal(typeof message, 'string', `the body is a JSON string: ${response.body}`);
  assert.ok((message as string).length > 0);
  return message as string;
}

describeEachEngine('GET /api/v1/conversions', (engine) => {
  let ctx: TestContext;
  let key: string;
  let otherKey: string;
  let pagerKey: string;
  /** The main account's ids by receipt. */
  const ids = new Map<string, number>();

  const get = (query: string, apiKey = key) =>
    ctx.app.inject({ method: 'GET', url: `/api/v1/conversions${query === '' ? '' : `?${query}`}`, headers: { 'x-api-key': apiKey } });

  async function list(query: string, apiKey = key) {
    const response = await get(query, apiKey);
    assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
    return response.json();
  }

  before(async () => {
    ctx = await startTestApp(engine);
    const main = await accountWithKey(ctx.accounts, 'main');
    const other = await accountWithKey(ctx.accounts, 'other');
    const pager = await accountWithKey(ctx.accounts, 'pager');
    key = main.key;
    otherKey = other.key;
    pagerKey = pager.key;
    // The other account's rows go in first and in between, so the main account's ids are not 1..8.
    await insertConversions(ctx.database, other.accountId, OTHER_RECORDS.slice(0, 2));
    await insertConversions(ctx.database, main.accountId, RECORDS);
    await insertConversions(ctx.database, other.accountId, OTHER_RECORDS.slice(2));
    await insertConversions(
      ctx.database,
      pager.accountId,
      Array.from({ length: 205 }, (_, i) =>
        conversionRecord({ receipt: `P-${String(i).padStart(3, '0')}`, amount: i, created_at: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z` }),
      ),
    );
    const body = await list('');
    for (const entry of body.entries) ids.set(entry.receipt, entry.id);
  });
  after(() => ctx.close());

  // ---- filters ----

  for (const { says, params, expected } of FILTER_CASES) {
    test(`filter ${qs(params)}: ${says}`, async () => {
      const body = await list(qs(params));
      const receipts = receiptsOf(body);
      // The tables write record E by its letter; its receipt is `E,1`.
      assert.deepEqual(sorted(receipts), sorted(expected.map((r) => (r === 'E' ? 'E,1' : r))));
      assert.equal(new Set(receipts).size, receipts.length, 'no entry is served twice');
      assert.equal(body.totalEntries, expected.length);
      assert.equal(body.totalPages, expected.length === 0 ? 0 : 1);
      assert.equal(body.page, 1);
    });
  }

  test('a + in the query string decodes to a space and is read as a + offset', async () => {
    const body = await list('created_at=2026-03-01T01:00:00+01:00');
    assert.deepEqual(receiptsOf(body), ['A']);
  });

  test('a timestamp filter with a fraction of a second matches its whole second', async () => {
    const body = await list(qs([['created_at', '2026-03-15T10:30:00.999Z']]));
    assert.deepEqual(receiptsOf(body), ['E,1']);
  });

  test('id filters: equality, in, gt and between by the ids the listing shows', async () => {
    const id = (receipt: string) => String(ids.get(receipt));
    assert.deepEqual(receiptsOf(await list(qs([['id', id('A')]]))), ['A']);
    assert.deepEqual(receiptsOf(await list(qs([['id.in', `${id('B')},${id('G')}`]]))), ['B', 'G']);
    assert.deepEqual(receiptsOf(await list(qs([['id.gt', id('F')]]))), ['G', 'H']);
    assert.deepEqual(receiptsOf(await list(qs([['id.between', `${id('C')},${id('E,1')}`]]))), ['C', 'D', 'E,1']);
    assert.deepEqual(receiptsOf(await list(qs([['id.lte', id('A')]]))), ['A']);
  });

  test('every filterable column of conversions accepts an equality filter and matches by its value', async () => {
    const a = (await list(qs([['receipt', 'A']]))).entries[0];
    for (const column of FILTERABLE) {
      let value = a[column];
      if (column === 'tracking_codes') value = value[0];
      if (column === 'mobile') value = value ? 't' : 'f';
      const body = await list(qs([[column, String(value)]]));
      assert.ok(receiptsOf(body).includes('A'), `${column}=${value} finds A`);
      for (const entry of body.entries) {
        if (column === 'tracking_codes') assert.ok(entry.tracking_codes.includes(value), `${column}: ${entry.receipt}`);
        else if (column === 'mobile') assert.equal(entry.mobile, a.mobile, `${column}: ${entry.receipt}`);
        else assert.equal(entry[column], a[column], `${column}: ${entry.receipt}`);
      }
    }
  });

  test('every non-boolean filterable column takes every modifier', async () => {
    const a = (await list(qs([['receipt', 'A']]))).entries[0];
    for (const column of FILTERABLE.filter((name) => name !== 'mobile')) {
      const raw = column === 'tracking_codes' ? a.tracking_codes[0] : a[column];
      const value = String(raw).includes(',') ? `"${String(raw).replaceAll('"', '""')}"` : String(raw);
      for (const [modifier, text] of [
        ['gte', String(raw)],
        ['lte', String(raw)],
        ['between', `${value},${value}`],
        ['in', value],
      ]) {
        const body = await list(qs([[`${column}.${modifier}`, text!]]));
        assert.ok(receiptsOf(body).includes('A'), `${column}.${modifier}=${text} finds A`);
      }
    }
  });

  // ---- errors ----

  for (const { says, query, names } of BAD_FILTERS) {
    test(`400 naming the parameter for ${says}: ${query.length > 60 ? `${query.slice(0, 60)}...` : query}`, async () => {
      const message = assertJsonError(await get(query), 400);
      assert.ok(message.includes(names), `"${message}" names ${names}`);
    });
  }

  test('a 400 for a bad value says what shape is expected', async () => {
    assert.match(assertJsonError(await get('page_id=abc'), 400), /whole number|integer/i);
    assert.match(assertJsonError(await get('amount=abc'), 400), /number/i);
    assert.match(assertJsonError(await get('created_at=yesterday'), 400), /2026-11-22|YYYY-MM-DD|date/i);
    assert.match(assertJsonError(await get('mobile=yes'), 400), /\bt\b.*\bf\b/);
  });

  for (const { says, query } of BAD_PAGES) {
    test(`400 for ${says} (${query})`, async () => {
      const message = assertJsonError(await get(query), 400);
      assert.match(message, /page/);
    });
  }

  test('a 400 changes nothing: the listing is the same before and after every bad request', async () => {
    const before = (await get('')).body;
    for (const { query } of [...BAD_FILTERS, ...BAD_PAGES]) assert.equal((await get(query)).statusCode, 400);
    assert.equal((await get('')).body, before);
  });

  // ---- pagination ----

  test('without page the first page is served; the envelope has exactly entries, totalEntries, page and totalPages', async () => {
    const response = await get('', pagerKey);
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    const body = response.json();
    assert.deepEqual(Object.keys(body).sort(), ['entries', 'page', 'totalEntries', 'totalPages']);
    assert.equal(body.page, 1);
    assert.equal(body.totalEntries, 205);
    assert.equal(body.totalPages, 3);
    assert.equal(body.entries.length, 100);
    assert.deepEqual(
      receiptsOf(body),
      Array.from({ length: 100 }, (_, i) => `P-${String(i).padStart(3, '0')}`),
    );
    assert.deepEqual(await list('page=1', pagerKey), body);
  });

  test('pages hold 100 entries in ascending id order, the last one the rest, with no overlap', async () => {
    const pages = [await list('page=1', pagerKey), await list('page=2', pagerKey), await list('page=3', pagerKey)];
    assert.deepEqual(
      pages.map((p) => p.entries.length),
      [100, 100, 5],
    );
    assert.deepEqual(
      pages.map((p) => p.page),
      [1, 2, 3],
    );
    for (const p of pages) assert.deepEqual([p.totalEntries, p.totalPages], [205, 3]);
    const all = pages.flatMap((p) => p.entries);
    const allIds = all.map((entry: { id: number }) => entry.id);
    assert.deepEqual(
      allIds,
      [...allIds].sort((x, y) => x - y),
    );
    assert.equal(new Set(allIds).size, 205);
    assert.deepEqual(
      all.map((entry: { receipt: string }) => entry.receipt),
      Array.from({ length: 205 }, (_, i) => `P-${String(i).padStart(3, '0')}`),
    );
  });

  test('a page past the end is 200 with no entries and the true totals', async () => {
    for (const page of [4, 1000, 1_000_000]) {
      const body = await list(`page=${page}`, pagerKey);
      assert.deepEqual(body, { entries: [], totalEntries: 205, page, totalPages: 3 });
    }
  });

  test('leading zeros in page are still decimal digits', async () => {
    const body = await list('page=002', pagerKey);
    assert.equal(body.page, 2);
    assert.equal(body.entries[0].receipt, 'P-100');
  });

  test('pagination applies to the filtered rows', async () => {
    const first = await list('amount.gte=50&page=1', pagerKey);
    const second = await list('amount.gte=50&page=2', pagerKey);
    assert.deepEqual([first.totalEntries, first.totalPages, first.entries.length], [155, 2, 100]);
    assert.deepEqual([second.totalEntries, second.totalPages, second.entries.length, second.page], [155, 2, 55, 2]);
    assert.equal(first.entries[0].receipt, 'P-050');
    assert.equal(second.entries.at(-1).receipt, 'P-204');
  });

  test('exactly 100 matches make one page; page 2 of them is empty', async () => {
    const body = await list('amount.lt=100', pagerKey);
    assert.deepEqual([body.totalEntries, body.totalPages, body.entries.length], [100, 1, 100]);
    assert.deepEqual(await list('amount.lt=100&page=2', pagerKey), { entries: [], totalEntries: 100, page: 2, totalPages: 1 });
  });

  test('101 matches make two pages', async () => {
    const body = await list('amount.lte=100&page=2', pagerKey);
    assert.deepEqual([body.totalEntries, body.totalPages, receiptsOf(body)], [101, 2, ['P-100']]);
  });

  test('nothing matching is 200 with no entries, totalEntries 0 and totalPages 0', async () => {
    assert.deepEqual(await list('amount.gt=1000000', pagerKey), { entries: [], totalEntries: 0, page: 1, totalPages: 0 });
    assert.deepEqual(await list('amount.gt=1000000&page=3', pagerKey), { entries: [], totalEntries: 0, page: 3, totalPages: 0 });
  });

  test('the walk id.gt=<last id> on page 1 visits every row once', async () => {
    const seen: string[] = [];
    let last = 0;
    for (;;) {
      const body = await list(`id.gt=${last}`, pagerKey);
      if (body.entries.length === 0) break;
      seen.push(...receiptsOf(body));
      last = body.entries.at(-1).id;
    }
    assert.equal(seen.length, 205);
    assert.equal(new Set(seen).size, 205);
  });

  // ---- isolation ----

  test('an account sees only its own conversions, counts included', async () => {
    const mine = await list('');
    assert.deepEqual(sorted(receiptsOf(mine)), sorted(['A', 'B', 'C', 'D', 'E,1', 'F', 'G', 'H']));
    assert.equal(mine.totalEntries, ALL.length);
    const theirs = await list('', otherKey);
    assert.deepEqual(receiptsOf(theirs), ['A', 'B', 'O1']);
    assert.equal(theirs.totalEntries, 3);
    assert.equal(theirs.totalPages, 1);
    const theirIds = new Set(theirs.entries.map((entry: { id: number }) => entry.id));
    for (const entry of mine.entries) assert.ok(!theirIds.has(entry.id));
  });

  test("the same receipt in two accounts is served with each account's own values", async () => {
    const mine = await list('receipt=A');
    const theirs = await list('receipt=A', otherKey);
    assert.equal(mine.entries[0].amount, 19.99);
    assert.equal(theirs.entries[0].amount, 7);
    assert.notEqual(mine.entries[0].id, theirs.entries[0].id);
  });

  test("filters match only the account's own rows", async () => {
    const cases: [string, string[], string[]][] = [
      // query, main's receipts, other's receipts
      ['amount=19.99', ['A'], ['B', 'O1']],
      ['country=US', ['A', 'E,1', 'G'], ['A', 'O1']],
      ['tracking_codes=fb', ['B', 'E,1'], ['A', 'B']],
      ['tracking_codes.in=google', ['A', 'E,1'], ['A', 'O1']],
      ['created_at=2026-03-01', ['A', 'B'], ['A', 'B']],
      ['created_at=2026-03-15T10:30:00Z', ['E,1'], ['O1']],
      ['mobile=t', ['A', 'E,1', 'F'], ['A', 'O1']],
      ['receipt=O1', [], ['O1']],
    ];
    for (const [query, mine, theirs] of cases) {
      const a = await list(query);
      const b = await list(query, otherKey);
      assert.deepEqual(sorted(receiptsOf(a)), sorted(mine), `main: ${query}`);
      assert.equal(a.totalEntries, mine.length, `main total: ${query}`);
      assert.deepEqual(sorted(receiptsOf(b)), sorted(theirs), `other: ${query}`);
      assert.equal(b.totalEntries, theirs.length, `other total: ${query}`);
    }
  });

  test("another account's id is not found by an id filter", async () => {
    const theirs = await list('receipt=O1', otherKey);
    const body = await list(`id=${theirs.entries[0].id}`);
    assert.deepEqual(body, { entries: [], totalEntries: 0, page: 1, totalPages: 0 });
  });

  test("a page past the end of one account reports that account's totals only", async () => {
    assert.deepEqual(await list('page=2', otherKey), { entries: [], totalEntries: 3, page: 2, totalPages: 1 });
    assert.deepEqual(await list('page=2'), { entries: [], totalEntries: 8, page: 2, totalPages: 1 });
  });

  // ---- the entry ----

  test("an entry has exactly the documented fields of a conversion, the buyer's country as country", async () => {
    for (const entry of (await list('')).entries) {
      assert.deepEqual(Object.keys(entry).sort(), ENTRY_FIELDS, entry.receipt);
    }
  });

  test('an entry round-trips every field: numbers, arrays and objects as written', async () => {
    const entry: Record<string, any> = (await list('receipt=A')).entries[0];
    assert.deepEqual({ ...entry }, { ...RECORD_A, id: ids.get('A') });
    assert.equal(typeof entry.amount, 'number');
    assert.equal(typeof entry.page_id, 'number');
    assert.equal(typeof entry.mobile, 'boolean');
    assert.deepEqual(entry.products, [
      { sku: 'SKU-1', price: 19.99, qty: 1 },
      { sku: 'GIFT', price: 0, qty: 0 },
    ]);
    assert.deepEqual(entry.affiliate_payouts, [1.25, 0.1, 3]);
    assert.deepEqual(entry.tracking_codes, ['fb-spring', 'google']);
    assert.equal(entry.country, 'US');
  });

  test('an entry holds the exact text of the response body: 19.99 is written 19.99', async () => {
    const body = (await get('receipt=A')).body;
    assert.match(body, /"amount":19\.99[,}]/);
    assert.match(body, /"price":19\.99[,}]/);
    assert.match(body, /"affiliate_payouts":\[1\.25,0\.1,3\]/);
  });

  test('a timestamp reads back as RFC 3339 UTC with second precision and Z', async () => {
    const body = await list('');
    for (const entry of body.entries) assert.match(entry.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const byReceipt = new Map(body.entries.map((entry: { receipt: string; created_at: string }) => [entry.receipt, entry.created_at]));
    assert.equal(byReceipt.get('E,1'), '2026-03-15T10:30:00Z');
    assert.equal(byReceipt.get('H'), '2025-12-31T12:00:00Z');
  });

  test('an unknown value is null, never a missing key; an empty array is []', async () => {
    const [entry] = (await list('receipt=H')).entries;
    const expected: Record<string, unknown> = {};
    for (const field of ENTRY_FIELDS) expected[field] = null;
    Object.assign(expected, {
      id: ids.get('H'),
      created_at: '2025-12-31T12:00:00Z',
      cart_integration: 'svencart',
      receipt: 'H',
      products: [],
      tracking_codes: [],
      affiliate_payouts: [],
    });
    assert.deepEqual(entry, expected);
    const [c] = (await list('receipt=C')).entries;
    assert.equal(c.mobile, null);
    assert.equal(c.country, null);
    assert.equal(c.page_id, null);
    assert.deepEqual(c.tracking_codes, []);
    assert.equal(c.first_name, 'Zoë');
    assert.equal(c.user_id, null);
    const [b] = (await list('receipt=B')).entries;
    assert.equal(b.user_id, '', 'the empty string stays distinct from null');
    assert.equal(b.mobile, false);
  });
});
