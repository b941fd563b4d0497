// Digistore24's IPN (the "Generic" connection): a POST of form fields, one per transaction (the
// first sale, each upsell item, each rebill), signed with `sha_sign`. SvenCart appears to run
// Digistore24's software and to send the same IPN, so one receiver serves both.
import { createHash } from 'node:crypto';
import type { CartIntegration, CartRequest, EventType, Receiver, Verdict } from '../notification.js';
import {
  type ConversionRecord,
  contentKey,
  conversionFor,
  countryOf,
  currencyOf,
  distinct,
  epochOfLocalTime,
  type Fields,
  first,
  formFields,
  numberOf,
  pageIdOf,
  paymentMethodOf,
  sameSecret,
  textReply,
  timesOf,
} from './fields.js';
import { HTML4_ENTITIES } from './html4-entities.js';

// ---------------------------------------------------------------------------------------------
// The signature

/** What Digistore24 signs with when the IPN connection has no passphrase: the IPN is unsigned. */
const UNSIGNED = 'no_signature_passphrase_provided';

/**
 * PHP's `html_entity_decode` with its default table, HTML 4.01's: its 252 named entities
 * (`&amp;`, `&Ouml;`, `&euro;`, ...; not `&apos;`) and numeric ones (`&#39;`, `&#x27;`). Others
 * stay as written.
 */
export function decodeHtmlEntities(text: string): string {
  return text.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]*);/g, (entity, name: string) => {
    if (!name.startsWith('#')) {
      const codePoint = HTML4_ENTITIES.get(name);
      return codePoint === undefined ? entity : String.fromCodePoint(codePoint);
    }
    const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
    const isCharacter = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
    return isCharacter ? String.fromCodePoint(code) : entity;
  });
}

/**
 * Digistore24's `sha_sign`: SHA-512, in upper-case hex, of `KEY=VALUE` followed by the
 * passphrase for every non-empty field but the signature itself, keys sorted byte-wise. Its
 * two published implementations differ: the 2019 example decodes HTML entities in each value
 * first (`htmlDecode`), the newer helper does not; in upper-case-keys mode the keys are sorted
 * and written upper-cased.
 */
export function digistoreSignature(fields: Fields, passphrase: string, options: { htmlDecode?: boolean; upperCaseKeys?: boolean } = {}): string {
  const keyOf = (name: string) => (options.upperCaseKeys ? name.toUpperCase() : name);
  const names = [...fields.keys()]
    .filter((name) => name !== 'sha_sign' && name !== 'SHASIGN')
    .sort((a, b) => Buffer.compare(Buffer.from(keyOf(a)), Buffer.from(keyOf(b))));
  const hash = createHash('sha512');
  for (const name of names) {
    const value = options.htmlDecode ? decodeHtmlEntities(fields.get(name)!) : fields.get(name)!;
    // PHP skips null, "" and false; "0" is signed.
    if (value === '') continue;
    hash.update(`${keyOf(name)}=${value}${passphrase}`, 'utf8');
  }
  return hash.digest('hex').toUpperCase();
}

/** Why the IPN's signature is not right, or undefined when it is (either implementation). */
function signatureProblem(fields: Fields, passphrase: string): string | undefined {
  const upperCaseKeys = !fields.has('sha_sign') && fields.has('SHASIGN');
  const received = fields.get(upperCaseKeys ? 'SHASIGN' : 'sha_sign');
  if (received === undefined || received === '') return 'the IPN is not signed (no sha_sign): set the IPN passphrase in the IPN connection';
  if (received === UNSIGNED) {
    return 'Digistore24 signed nothing because the IPN connection has no passphrase: set its IPN passphrase to the one given here';
  }
  for (const htmlDecode of [false, true]) {
    if (sameSecret(received.toUpperCase(), digistoreSignature(fields, passphrase, { htmlDecode, upperCaseKeys }))) return undefined;
  }
  return 'the sha_sign does not match: make the IPN passphrase of the IPN connection the one given here';
}

// ---------------------------------------------------------------------------------------------
// The event

/** A count Digistore24 sends as text ("0", "2"); 0 when absent or unreadable. */
function countOf(fields: Fields, name: string): number {
  const count = Number(first(fields, name) ?? 0);
  return Number.isInteger(count) && count > 0 ? count : 0;
}

function eventOf(event: string, fields: Fields): EventType {
  switch (event) {
    case 'on_payment':
      // One order's items share its order_id: the items after the first are its upsells, and a
      // later payment of a subscription or an instalment plan is a rebill.
      if (isLaterPayment(fields)) return 'rebill';
      return countOf(fields, 'upsell_no') >= 1 ? 'upsell' : 'sale';
    case 'on_refund':
      return 'refund';
    case 'on_chargeback':
      return 'chargeback';
    case 'on_rebill_cancelled':
      return 'cancel';
    default:
      // on_payment_missed, payment_denial, on_rebill_resumed, last_paid_day, on_affiliation, ...
      return 'other';
  }
}

/**
 * The receipt of the payment: the order's id, then `-<n>` for its n-th upsell item and
 * `-P<n>` for its n-th later payment, as one order's items and payments share its id. A refund
 * or chargeback of a payment carries the same fields, and so names the same receipt.
 */
function receiptOf(fields: Fields): string | undefined {
  const orderId = first(fields, 'order_id');
  if (orderId === undefined) return undefined;
  const upsellNo = countOf(fields, 'upsell_no');
  return `${orderId}${upsellNo >= 1 ? `-${upsellNo}` : ''}${isLaterPayment(fields) ? `-P${countOf(fields, 'pay_sequence_no')}` : ''}`;
}

function originalReceiptOf(fields: Fields): string | undefined {
  return countOf(fields, 'upsell_no') >= 1 || isLaterPayment(fields) ? first(fields, 'order_id') : undefined;
}

/**
 * Whether a payment is a subscription's or an instalment plan's second or later: `pay_sequence_no`
 * is 0 for a single payment (Digistore24's own test IPN) and 1 for a plan's first payment, as the
 * receivers in use read it (a membership plugin's "single or initial payment: 0 or 1"; another's
 * "1 = the initial payment, 2+ = each rebill"): the first payment is the sale itself.
 */
function isLaterPayment(fields: Fields): boolean {
  return countOf(fields, 'pay_sequence_no') >= 2;
}

/**
 * Digistore24 does not say in which zone `order_date_time` is written. We ASSUME Europe/Berlin,
 * where Digistore24 is based (its test IPNs are in German): to be checked against a real IPN's
 * order time.
 */
const DIGISTORE_TIME_ZONE = 'Europe/Berlin';
const epochOfDigistoreTime = (text: string) => epochOfLocalTime(text, DIGISTORE_TIME_ZONE);

function read(cart: CartIntegration, request: CartRequest, passphrase: string | null): Verdict {
  if (!passphrase) return { kind: 'refused', reason: 'no IPN passphrase was given when the cart was connected: connect it again with one' };
  const fields = formFields(request.rawBody.toString('utf8'));
  const problem = signatureProblem(fields, passphrase);
  if (problem !== undefined) return { kind: 'refused', reason: problem };
  const cartEvent = first(fields, 'event');
  if (cartEvent === undefined) return { kind: 'invalid', reason: 'event is missing: choose the "Generic" type for the IPN connection' };
  if (cartEvent === 'connection_test') return { kind: 'acknowledged', reason: 'the connection test' };

  const event = eventOf(cartEvent, fields);
  const payload = request.rawBody.toString('utf8');
  const { createdAt, occurredAt } = timesOf(first(fields, 'order_date_time'), epochOfDigistoreTime, request.receivedAt);
  const receipt = receiptOf(fields) ?? null;
  const originalReceipt = originalReceiptOf(fields) ?? null;
  return {
    kind: 'notification',
    notification: {
      // One transaction (a payment, a refund) can be told of under several events.
      eventKey: `${first(fields, 'transaction_id', 'order_id') ?? contentKey(payload)}/${cartEvent}`,
      event,
      cartEvent,
      receipt,
      originalReceipt,
      test: first(fields, 'api_mode') === 'test' || first(fields, 'pay_method') === 'test',
      occurredAt,
      payload,
      conversion: conversionFor(event, { ...recordOf(cart, fields), created_at: createdAt, receipt, original_receipt: originalReceipt }),
    },
  };
}

/** The conversion's fields that the IPN carries. */
function recordOf(cart: CartIntegration, fields: Fields): ConversionRecord {
  const affiliate = first(fields, 'affiliate_name');
  const upsellNo = countOf(fields, 'upsell_no');
  const amountAffiliate = first(fields, 'amount_affiliate');
  return {
    cart_integration: cart,
    amount: numberOf(first(fields, 'amount_brutto')),
    tax_amount: numberOf(first(fields, 'amount_vat', 'vat_amount', 'transaction_vat_amount')),
    shipping_amount: numberOf(first(fields, 'product_shipping_amount', 'product_txn_shipping')),
    products: productsOf(fields),
    email: first(fields, 'email', 'buyer_email', 'address_email'),
    first_name: first(fields, 'address_first_name', 'buyer_first_name'),
    last_name: first(fields, 'address_last_name', 'buyer_last_name'),
    zip_code: first(fields, 'address_zipcode', 'buyer_address_zipcode'),
    country: countryOf(first(fields, 'address_country', 'country', 'buyer_address_country')),
    currency: currencyOf(first(fields, 'currency')),
    payment_method: paymentMethodOf(first(fields, 'pay_method')),
    affiliate,
    vendor: first(fields, 'merchant_name', 'merchant_id'),
    // The vendor's tracking key (?ds24tr=), the affiliate's campaign key and click id (?cid=).
    tracking_codes: distinct([first(fields, 'trackingkey'), first(fields, 'campaignkey'), first(fields, 'click_id')]),
    affiliate_payouts: affiliate !== undefined && amountAffiliate !== undefined ? [numberOf(amountAffiliate)] : undefined,
    upsell_step: upsellNo >= 1 ? upsellNo : undefined,
    upsell_path: first(fields, 'upsell_path'),
    ...customOf(first(fields, 'custom')),
  };
}

/** One product per IPN, its price the gross amount per unit. */
function productsOf(fields: Fields): unknown[] | undefined {
  const sku = first(fields, 'product_id');
  if (sku === undefined) return undefined;
  const amount = numberOf(first(fields, 'amount_brutto'));
  const qty = numberOf(first(fields, 'quantity') ?? '1');
  // In cents, so that 100.00 for 3 is 33.33 and not 33.333333333333336.
  const price = typeof amount === 'number' && typeof qty === 'number' && qty > 0 ? Math.round((amount / qty) * 100) / 100 : amount;
  return [{ sku, price, qty }];
}

/** `user.page.version` (`u_7f3a9c.12.b`): the funnel's three values, packed in the order form's one `?custom=` parameter. */
const PACKED_CUSTOM = /^(.+)\.(\d+)\.([a-z])$/;

/** The funnel's values from `custom`: three packed ones, or else the whole value as the user id. */
function customOf(custom: string | undefined): ConversionRecord {
  if (custom === undefined) return {};
  const packed = PACKED_CUSTOM.exec(custom);
  if (!packed) return { user_id: custom };
  return { user_id: packed[1], page_id: pageIdOf(packed[2]), page_version: packed[3] };
}

function digistoreReceiver(name: 'digistore' | 'svencart'): Receiver {
  return {
    name,
    methods: ['POST'],
    needsSecret: true,
    read: (request, passphrase) => read(name, request, passphrase),
    // Digistore24 takes an IPN as delivered only when the body starts with OK.
    accepted: () => textReply(200, 'OK'),
    // Anything but OK is a failure that Digistore24 shows the vendor and retries for days; the
    // wording is the one of Digistore24's own example receiver.
    refused: () => textReply(200, 'ERROR: invalid sha signature'),
  };
}

export const digistore = digistoreReceiver('digistore');
export const svencart = digistoreReceiver('svencart');
