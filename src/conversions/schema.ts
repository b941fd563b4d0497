import { Type, type Static, type TSchema } from 'typebox';
import { catalogueFromSchema } from '../filters/catalogue.js';

export const CART_INTEGRATIONS = ['clickbank', 'stickyio', 'konnektive', 'buygoods', 'digistore', 'svencart'] as const;
export const PAYMENT_METHODS = ['creditcard', 'paypal'] as const;

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const text = (description?: string) => nullable(Type.String(description ? { description } : {}));

// The most products, tracking codes or payouts one conversion holds: an order has a few.
const MAX_ITEMS = 100;

/**
 * The largest sum of money one field holds, either way: a trillion. Summaries sum money exactly
 * (src/db/columnar/money.ts), which holds for values this size with six places; a double far
 * larger summed to infinity and failed the summary.
 */
export const MAX_MONEY = 1_000_000_000_000;
const money = () => Type.Number({ minimum: -MAX_MONEY, maximum: MAX_MONEY });

export const Product = Type.Object(
  {
    sku: Type.String({ maxLength: 2048 }),
    price: money(),
    qty: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/** An upsell as the list shows it: the example of the OpenAPI document, from examples/conversions.ndjson. */
export const EXAMPLE_CONVERSION = {
  id: 2,
  created_at: '2026-03-01T09:19:30Z',
  cart_integration: 'clickbank',
  receipt: 'CB-1002',
  original_receipt: 'CB-1001',
  amount: 117,
  tax_amount: 0,
  shipping_amount: 0,
  products: [{ sku: 'KETO-3', price: 117, qty: 1 }],
  email: 'ada@example.com',
  user_id: 'u1',
  page_id: 1002,
  page_version: 'a',
  upsell_flow_id: 'flow-1',
  upsell_session: 's-1',
  upsell_path: '1001>1002',
  upsell_group: 'upsell',
  upsell_step: 1,
  country: 'US',
  mobile: true,
  affiliate: 'aff_alpha',
  vendor: 'acme',
  role: 'upsell',
  tracking_codes: ['tc-facebook'],
  referrer: 'https://www.facebook.com/',
  referrer_name: 'Facebook',
  referrer_medium: 'social',
  joint_venture_order: null,
  currency: 'USD',
  hostname: 'shop.example.com',
  utm_source: 'facebook',
  utm_medium: 'cpc',
  utm_campaign: 'spring-sale',
  utm_content: 'ad-1',
  first_name: 'Ada',
  last_name: 'Lovelace',
  zip_code: '10001',
  payment_method: 'creditcard',
  affiliate_payouts: [58.5],
};

/**
 * A conversion as the API returns it (docs/api.md, "Conversions"). `country` is the buyer's
 * country (ISO 3166-1 alpha-2, upper case), the field the original interface called "the service".
 */
export const ConversionEntry = Type.Object(
  {
    id: Type.Integer(),
    created_at: Type.String({ format: 'date-time', description: 'RFC 3339, UTC, second precision' }),
    cart_integration: Type.Union(CART_INTEGRATIONS.map((cart) => Type.Literal(cart))),
    receipt: Type.String(),
    original_receipt: text('Receipt of the first order of an upsell chain'),
    amount: nullable(money()),
    tax_amount: nullable(money()),
    shipping_amount: nullable(money()),
    products: Type.Array(Product, { maxItems: MAX_ITEMS }),
    email: nullable(Type.String({ format: 'email', maxLength: 320, description: 'Buyer e-mail address' })),
    user_id: text(),
    // Whole numbers that JSON carries exactly, which PostgreSQL's bigint holds too.
    page_id: nullable(Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER })),
    page_version: nullable(Type.String({ pattern: '^[a-z]$', description: 'One letter, a to z' })),
    upsell_flow_id: text(),
    upsell_session: text(),
    upsell_path: text(),
    upsell_group: text(),
    upsell_step: nullable(Type.Number()),
    country: nullable(Type.String({ pattern: '^[A-Z]{2}$', description: "ISO 3166-1 alpha-2 code of the buyer's country, upper case" })),
    mobile: nullable(Type.Boolean({ description: 'true for conversions from mobile devices' })),
    affiliate: text(),
    vendor: text(),
    role: text(),
    tracking_codes: Type.Array(Type.String(), { maxItems: MAX_ITEMS }),
    referrer: text('Referrer URL the visitor came from'),
    referrer_name: text('Such as a search engine or social network'),
    referrer_medium: text('Such as email, search, social'),
    joint_venture_order: text(),
    currency: nullable(Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, upper case' })),
    hostname: text(),
    utm_source: text(),
    utm_medium: text(),
    utm_campaign: text(),
    utm_content: text(),
    first_name: text(),
    last_name: text(),
    zip_code: text(),
    payment_method: nullable(Type.Union(PAYMENT_METHODS.map((method) => Type.Literal(method)))),
    affiliate_payouts: Type.Array(money(), { maxItems: MAX_ITEMS }),
  },
  { additionalProperties: false, $id: 'ConversionEntry', examples: [EXAMPLE_CONVERSION] },
);
export type ConversionEntry = Static<typeof ConversionEntry>;

/** The filterable columns of conversions (docs/api.md, "Filters"). */
export const CONVERSION_FILTERS = [
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
] as const;

export const conversionCatalogue = catalogueFromSchema(ConversionEntry, CONVERSION_FILTERS, {
  tracking_codes: { table: 'conversion_tracking_codes', parentColumn: 'conversion_id', valueColumn: 'code' },
});
