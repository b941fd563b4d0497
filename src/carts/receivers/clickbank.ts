// ClickBank's Instant Notification Service (INS, version 6.0 and later): a POST whose raw body is
// JSON {"notification": <base64>, "iv": <base64>}, the notification encrypted with a key derived
// from the account's secret key. Decrypting to valid JSON is the only proof it is genuine.
import { createDecipheriv, createHash } from 'node:crypto';
import { type CartRequest, type EventType, PURCHASES, type Receiver, type Verdict } from '../notification.js';
import {
  type ConversionRecord,
  conversionFor,
  countryOf,
  epochOfIso8601,
  isObject,
  numberOf,
  parseJsonObject,
  passThrough,
  paymentMethodOf,
  textOf,
  textReply,
  timesOf,
} from './fields.js';

/**
 * The AES-256 key: the ASCII text of the first 32 characters of the lower-case hex SHA-1 of the
 * secret key (32 bytes; not the 20-byte digest itself), as ClickBank's own sample code does.
 */
export function clickbankKey(secret: string): Buffer {
  return Buffer.from(createHash('sha1').update(secret, 'utf8').digest('hex').slice(0, 32), 'ascii');
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The notification's plaintext, or why it cannot be had. The body must be ClickBank's JSON, the
 * ciphertext AES-256-CBC with PKCS#7 padding, and the plaintext UTF-8 JSON.
 */
export function decryptClickbank(body: Buffer | string, secret: string): { plaintext: string } | { problem: string } {
  const envelope = parseJsonObject(body.toString());
  if (envelope === undefined || typeof envelope.notification !== 'string' || typeof envelope.iv !== 'string') {
    return { problem: 'the body is not ClickBank\'s {"notification","iv"} JSON: choose version 6.0 or later for the Instant Notification URL' };
  }
  if (!BASE64.test(envelope.notification) || !BASE64.test(envelope.iv)) return { problem: 'the notification or its iv is not base64' };
  const iv = Buffer.from(envelope.iv, 'base64');
  if (iv.length !== 16) return { problem: 'the iv is not 16 bytes' };
  const undecryptable = {
    problem: 'the notification cannot be decrypted with the secret key given here: make it the Secret Key of ClickBank\'s "My Site" settings',
  };
  let bytes: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-cbc', clickbankKey(secret), iv);
    bytes = Buffer.concat([decipher.update(Buffer.from(envelope.notification, 'base64')), decipher.final()]);
  } catch {
    return undecryptable;
  }
  try {
    const plaintext = UTF8.decode(bytes);
    return parseJsonObject(plaintext) === undefined ? undecryptable : { plaintext };
  } catch {
    return undecryptable;
  }
}

/**
 * The keys every genuine notification has: text, and `lineItems` a list. CBC carries no MAC: whoever holds one notification
 * can flip bits of its first 16 bytes through the iv and still get JSON (`transactionTime`
 * becomes `transactionTile`), so a notification missing any of these is refused.
 */
const REQUIRED = ['transactionTime', 'receipt', 'transactionType', 'vendor', 'lineItems'];

/** A rebill's receipt is the first order's followed by `-B` and the payment's number (`P3RGBKGB-B002`). */
const REBILL_RECEIPT = /^(.+)-B\d+$/;

/** Our event for ClickBank's transaction type; `TEST_` types are the same events, made with a test card. */
function eventOf(transactionType: string, notification: Record<string, unknown>): EventType {
  const type = transactionType.replace(/^TEST_/, '');
  if (type === 'SALE') return isUpsell(notification) ? 'upsell' : 'sale';
  if (type === 'BILL') return 'rebill';
  if (type === 'RFND') return 'refund';
  if (type === 'CGBK') return 'chargeback';
  if (type === 'TEST') return 'test';
  if (/^CANCEL-(TEST-)?REBILL$/.test(type)) return 'cancel';
  // INSF (insufficient funds), UNCANCEL-REBILL, SUBSCRIPTION-CHG and whatever ClickBank adds.
  return 'other';
}

function isTest(transactionType: string): boolean {
  return /^TEST(_|$)|-TEST-/.test(transactionType);
}

function isUpsell(notification: Record<string, unknown>): boolean {
  const upsell = isObject(notification.upsell) ? notification.upsell : {};
  return textOf(upsell.upsellOriginalReceipt) !== undefined || lineItems(notification).some((item) => item.lineItemType === 'UPSELL');
}

function lineItems(notification: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(notification.lineItems) ? notification.lineItems.filter(isObject) : [];
}

/** The first order's receipt, for an upsell (ClickBank says it) or a rebill (its receipt's prefix). */
function originalReceiptOf(notification: Record<string, unknown>, event: EventType, receipt: string): string | undefined {
  const upsell = isObject(notification.upsell) ? notification.upsell : {};
  const original = textOf(upsell.upsellOriginalReceipt);
  if (original !== undefined) return original;
  return event === 'rebill' ? REBILL_RECEIPT.exec(receipt)?.[1] : undefined;
}

function read(request: CartRequest, secret: string | null): Verdict {
  if (!secret) return { kind: 'refused', reason: 'no secret key was given when ClickBank was connected: connect it again with its Secret Key' };
  const decrypted = decryptClickbank(request.rawBody, secret);
  if ('problem' in decrypted) return { kind: 'refused', reason: decrypted.problem };
  const notification = parseJsonObject(decrypted.plaintext)!;
  // An abandoned cart is no event of ours; it may lack the keys of a transaction.
  if (notification.transactionType === 'ABANDONED_ORDER') return { kind: 'acknowledged', reason: 'an abandoned order: nothing is kept' };
  const missing = REQUIRED.filter((key) => (key === 'lineItems' ? !Array.isArray(notification[key]) : typeof notification[key] !== 'string'));
  if (missing.length > 0) return { kind: 'refused', reason: `the decrypted notification lacks ${missing.join(', ')}: it is not one ClickBank sent` };

  const receipt = String(notification.receipt);
  const transactionType = String(notification.transactionType);
  const event = eventOf(transactionType, notification);
  const { createdAt, occurredAt } = timesOf(textOf(notification.transactionTime), epochOfIso8601, request.receivedAt);
  const originalReceipt = originalReceiptOf(notification, event, receipt) ?? null;
  // Every account in a sale (vendor, affiliate, partner) gets its own copy: counting only the
  // vendor's makes each sale one conversion.
  const role = textOf(notification.role);
  const vendorsCopy = role?.toUpperCase() === 'VENDOR';
  const conversion = vendorsCopy ? conversionFor(event, { ...recordOf(notification), created_at: createdAt, original_receipt: originalReceipt }) : undefined;
  const ignored =
    !vendorsCopy && PURCHASES.has(event)
      ? `${role === undefined ? 'a copy that names no role' : `a copy for the ${role}`}, not the vendor: only the vendor's copy of a sale becomes a conversion`
      : undefined;
  return {
    kind: 'notification',
    notification: {
      eventKey: `${receipt}:${transactionType}`,
      event,
      cartEvent: transactionType,
      receipt,
      originalReceipt,
      test: isTest(transactionType),
      occurredAt,
      payload: decrypted.plaintext,
      conversion,
      ...(ignored === undefined ? {} : { ignored }),
    },
  };
}

/** The conversion's fields that ClickBank's notification carries. */
function recordOf(notification: Record<string, unknown>): ConversionRecord {
  const customer = isObject(notification.customer) ? notification.customer : {};
  const billing = isObject(customer.billing) ? customer.billing : {};
  const shipping = isObject(customer.shipping) ? customer.shipping : {};
  const address = isObject(billing.address) ? billing.address : {};
  const upsell = isObject(notification.upsell) ? notification.upsell : {};
  const variables = isObject(notification.vendorVariables) ? notification.vendorVariables : {};
  const items = lineItems(notification);
  const payouts = items.filter((item) => item.affiliatePayout !== undefined).map((item) => numberOf(item.affiliatePayout));
  return {
    cart_integration: 'clickbank',
    receipt: String(notification.receipt),
    amount: numberOf(notification.totalOrderAmount),
    tax_amount: numberOf(notification.totalTaxAmount),
    shipping_amount: numberOf(notification.totalShippingAmount),
    // Before version 7.0 a line's only amount is the account's share of it.
    products: items.map((item) => ({
      sku: textOf(item.itemNo) ?? item.itemNo,
      price: numberOf(item.productPrice ?? item.accountAmount),
      qty: numberOf(item.quantity),
    })),
    email: textOf(billing.email) ?? textOf(shipping.email),
    ...namesOf(billing),
    zip_code: textOf(address.postalCode),
    country: countryOf(textOf(address.country)),
    currency: textOf(notification.currency),
    payment_method: paymentMethodOf(textOf(notification.paymentMethod)),
    affiliate: textOf(notification.affiliate),
    vendor: textOf(notification.vendor),
    role: textOf(notification.role),
    affiliate_payouts: payouts,
    tracking_codes: Array.isArray(notification.trackingCodes) ? notification.trackingCodes.map(textOf).filter((code) => code !== undefined) : undefined,
    upsell_flow_id: textOf(upsell.upsellFlowId),
    upsell_session: textOf(upsell.upsellSession),
    upsell_path: textOf(upsell.upsellPath),
    // The funnel's values come back among the pay link's parameters.
    ...passThrough((name) => textOf(variables[name])),
  };
}

/**
 * The buyer's first and last names. ClickBank sends them in capitals (`TEST`, `BUYER`) beside
 * `fullName` as the buyer typed it (`Test Buyer`): when the full name is the two names, its
 * spelling is kept.
 */
function namesOf(billing: Record<string, unknown>): { first_name?: string; last_name?: string } {
  const firstName = textOf(billing.firstName);
  const lastName = textOf(billing.lastName);
  const fullName = textOf(billing.fullName);
  if (firstName !== undefined && lastName !== undefined && fullName?.toLowerCase() === `${firstName} ${lastName}`.toLowerCase()) {
    return { first_name: fullName.slice(0, firstName.length), last_name: fullName.slice(firstName.length + 1) };
  }
  return { first_name: firstName, last_name: lastName };
}

export const clickbank: Receiver = {
  name: 'clickbank',
  methods: ['POST'],
  needsSecret: true,
  read,
  accepted: () => textReply(200, 'OK'),
  // Anything but a 200 is a failure to ClickBank, which its response-code monitoring shows.
  refused: (reason) => textReply(400, `ERROR: ${reason}`),
};
