// Test data: valid conversion records, importing them into an account, and text that sits exactly at a byte limit.
import { randomBytes } from 'node:crypto';
import { importConversions, type LineProblem, type SourceRecord } from '../../src/conversions/import.js';
import type { ConversionsAsOf } from '../../src/conversions/questions.js';
import { validateConversion } from '../../src/conversions/validate.js';
import type { Database } from '../../src/db/database.js';

/**
 * The fields of a conversion entry, in the order the API writes them, as the API reference lists
 * them (docs/api.md, "Conversions"): written out by hand, so that tests hold the code to it.
 */
export const CONVERSION_FIELDS: readonly string[] = [
  'id',
  'created_at',
  'cart_integration',
  'receipt',
  'original_receipt',
  'amount',
  'tax_amount',
  'shipping_amount',
  'products',
  'email',
  'user_id',
  'page_id',
  'page_version',
  'upsell_flow_id',
  'upsell_session',
  'upsell_path',
  'upsell_group',
  'upsell_step',
  'country',
  'mobile',
  'affiliate',
  'vendor',
  'role',
  'tracking_codes',
  'referrer',
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
  'affiliate_payouts',
];

/** Imports records into an account through the real import path; throws on any bad record. */
export async function insertConversions(database: Database, accountId: number, values: object[]): Promise<void> {
  const records: SourceRecord[] = values.map((value, index) => ({ line: index + 1, record: { value } }));
  const problems: string[] = [];
  const options = { onProblem: (p: LineProblem) => problems.push(`${p.line}: ${p.reason}`) };
  await importConversions(database, accountId, [records], options).catch((error) => {
    throw new Error(`${error.message}\n${problems.join('\n')}`);
  });
}

/** The account's conversions as a request authenticated now finds them (AccountRepository.accountForKey). */
export async function conversionsAsOf(database: Database, accountId: number): Promise<ConversionsAsOf> {
  const row = await database.db.selectFrom('conversion_versions').select('newest_id').where('account_id', '=', accountId).executeTakeFirst();
  return { accountId, newestId: Number(row?.newest_id ?? 0) };
}

/**
 * A record as the row store kept it before migration 0009: every field a column of its own
 * (arrays as JSON text, booleans as 0 or 1) beside the entry, for tests that start a database
 * at an earlier migration. Without `entry_json` before migration 0003.
 */
export function rowBeforeNarrowing(record: Record<string, unknown>): Record<string, unknown> {
  const checked = validateConversion(record);
  if (!('row' in checked)) throw new Error(checked.problems.join('; '));
  const row: Record<string, unknown> = { ...checked.row };
  for (const [name, value] of Object.entries(JSON.parse(checked.row.entry_json) as Record<string, unknown>)) {
    if (name in row) continue;
    row[name] = Array.isArray(value) ? JSON.stringify(value) : typeof value === 'boolean' ? Number(value) : value;
  }
  return row;
}

/**
 * `length` characters of `bytes` bytes each in UTF-8, in no pattern a database could compress
 * away: a value at a byte limit that must fit an index entry as it is.
 */
export function variedText(length: number, bytes: 1 | 2 | 3): string {
  const [first, count] = bytes === 1 ? [0x61, 26] : bytes === 2 ? [0x400, 0x100] : [0x4e00, 0x5000];
  return Array.from({ length }, (_, index) => String.fromCodePoint(first + ((Math.imul(index + 1, 2654435761) >>> 0) % count))).join('');
}

/** A valid conversion record with every field set; override what the test is about. */
export function conversionRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    created_at: '2026-03-15T12:00:00Z',
    cart_integration: 'clickbank',
    receipt: `R-${randomBytes(6).toString('hex')}`,
    original_receipt: null,
    amount: 19.99,
    tax_amount: 1.5,
    shipping_amount: 0,
    products: [{ sku: 'SKU-1', price: 19.99, qty: 1 }],
    email: 'buyer@example.com',
    user_id: 'u1',
    page_id: 1001,
    page_version: 'a',
    upsell_flow_id: 'flow-1',
    upsell_session: 'session-1',
    upsell_path: '1001',
    upsell_group: 'front',
    upsell_step: 0,
    country: 'US',
    mobile: false,
    affiliate: 'aff_alpha',
    vendor: 'acme',
    role: 'front_end',
    tracking_codes: [],
    referrer: 'https://www.google.com/',
    referrer_name: 'Google',
    referrer_medium: 'search',
    joint_venture_order: null,
    currency: 'USD',
    hostname: 'shop.example.com',
    utm_source: 'facebook',
    utm_medium: 'cpc',
    utm_campaign: 'launch',
    utm_content: 'ad-1',
    first_name: 'Ada',
    last_name: 'Lovelace',
    zip_code: '10001',
    payment_method: 'creditcard',
    affiliate_payouts: [],
    ...overrides,
  };
}
