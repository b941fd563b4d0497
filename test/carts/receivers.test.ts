import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { type CartNotification, type CartRequest, RECEIVERS, type Verdict } from '../../src/carts/notification.js';
import { buygoods } from '../../src/carts/receivers/buygoods.js';
import { clickbank, clickbankKey, decryptClickbank } from '../../src/carts/receivers/clickbank.js';
import { decodeHtmlEntities, digistore, digistoreSignature, svencart } from '../../src/carts/receivers/digistore.js';
import {
  countryOf,
  epochOfIso8601,
  epochOfLocalTime,
  formFields,
  paymentMethodOf,
  requestFields,
  sameSecret,
  type ConversionRecord,
} from '../../src/carts/receivers/fields.js';
import { generic, genericSignature } from '../../src/carts/receivers/generic.js';
import { RECEIVER_BY_NAME } from '../../src/carts/receivers/index.js';
import { konnektive } from '../../src/carts/receivers/konnektive.js';
import { stickyio } from '../../src/carts/receivers/stickyio.js';
import { validateConversion } from '../../src/conversions/validate.js';
import { clickbankBody, randomSecret } from '../helpers/carts.js';
import * as V from './vectors.js';

/**
 * The receivers of cart notifications, each a pure function from a request as received to a
 * verdict: the research's offline vectors (real captures and requests built by hand) give exact
 * results, and notifications built here with random secrets go round the cart's own algorithm.
 */

// ---------------------------------------------------------------------------------------------
// Requests as the service hands them to a receiver

const RECEIVED_AT = V.GEN1_T;

function post(body: string, options: { headers?: CartRequest['headers']; receivedAt?: number; method?: string } = {}): CartRequest {
  return {
    method: options.method ?? 'POST',
    query: {},
    rawBody: Buffer.from(body),
    headers: options.headers ?? {},
    receivedAt: options.receivedAt ?? RECEIVED_AT,
  };
}

/** A GET as the framework parses it: the query string decoded, a repeated name as an array. */
function get(url: string): CartRequest {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URL(url, 'https://acds.example').searchParams) {
    const before = query[name];
    query[name] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
  }
  return { method: 'GET', query, rawBody: Buffer.alloc(0), headers: {}, receivedAt: RECEIVED_AT };
}

function notificationOf(verdict: Verdict): CartNotification {
  assert.equal(verdict.kind, 'notification', JSON.stringify(verdict));
  return (verdict as { notification: CartNotification }).notification;
}

function reasonOf(verdict: Verdict, kind: 'refused' | 'invalid'): string {
  assert.equal(verdict.kind, kind, JSON.stringify(verdict).slice(0, 300));
  return (verdict as { reason: string }).reason;
}

/** The record passes the import's own checks (the generic webhook's may lack cart_integration, which its sender names). */
function assertImportable(record: ConversionRecord | undefined, extra: ConversionRecord = {}): void {
  assert.ok(record, 'a purchase has a conversion');
  const checked = validateConversion({ ...record, ...extra });
  assert.ok('row' in checked, JSON.stringify(checked));
}

// ---------------------------------------------------------------------------------------------
// ClickBank

/** A vendor's notification of a sale, in ClickBank's version 7.0 shape. */
function clickbankSale(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    transactionTime: '2026-03-02T10:15:30-08:00',
    receipt: 'FE000001',
    transactionType: 'SALE',
    vendor: 'acmevend',
    role: 'VENDOR',
    totalOrderAmount: 49.0,
    currency: 'USD',
    paymentMethod: 'PYPL',
    lineItems: [{ itemNo: 'ebook-01', accountAmount: 30.1, quantity: 1, lineItemType: 'ORIGINAL', productPrice: 49.0 }],
    customer: { billing: { email: 'buyer@example.com', address: { postalCode: '83702', country: 'US' } } },
    upsell: {},
    version: 7.0,
    attemptCount: 1,
    ...overrides,
  };
}

function readClickbank(notification: Record<string, unknown>, secret = randomSecret()): Verdict {
  return clickbank.read(post(clickbankBody(secret, JSON.stringify(notification))), secret);
}

const CB2_RECORD = {
  created_at: '2026-03-02T18:15:30Z',
  cart_integration: 'clickbank',
  receipt: 'TESTUP02',
  original_receipt: 'TESTFE01',
  amount: 52.9,
  tax_amount: 3.95,
  shipping_amount: 9.95,
  products: [{ sku: 'up1-2btl', price: 39, qty: 1 }],
  affiliate_payouts: [0],
  email: 'test.buyer@example.com',
  first_name: 'Test',
  last_name: 'Buyer',
  zip_code: '83702',
  country: 'US',
  currency: 'USD',
  payment_method: 'creditcard',
  affiliate: 'affjoe',
  vendor: 'acmevend',
  role: 'VENDOR',
  tracking_codes: ['fbads01'],
  upsell_flow_id: '4021',
  upsell_session: 'TESTFE01AB',
  upsell_path: 'a',
  user_id: 'u_7f3a9c',
  page_id: 12,
  page_version: 'b',
  utm_source: 'facebook',
};

test('ClickBank: the key is the ASCII text of the first 32 hex characters of SHA-1(secret key)', () => {
  for (const [secret, key] of [
    [V.CB1_SECRET, V.CB1_KEY],
    [V.CB2_SECRET, V.CB2_KEY],
  ]) {
    assert.equal(clickbankKey(secret!).toString('ascii'), key);
    assert.equal(clickbankKey(secret!).length, 32);
  }
});

test('ClickBank: the real CB-1 notification decrypts to its exact 530-byte plaintext', () => {
  const decrypted = decryptClickbank(V.CB1_BODY, V.CB1_SECRET);
  assert.deepEqual(decrypted, { plaintext: V.CB1_PLAINTEXT });
  assert.equal(Buffer.byteLength(V.CB1_PLAINTEXT), 530);
});

test("ClickBank: CB-1, an affiliate's copy of a sale, is kept without a conversion and says why", () => {
  const notification = notificationOf(clickbank.read(post(V.CB1_BODY), V.CB1_SECRET));
  assert.deepEqual(notification, {
    eventKey: 'AXN66NVG:SALE',
    event: 'sale',
    cartEvent: 'SALE',
    receipt: 'AXN66NVG',
    originalReceipt: null,
    test: false,
    occurredAt: Date.parse('2017-09-26T20:38:12Z') / 1000,
    payload: V.CB1_PLAINTEXT,
    conversion: undefined,
    ignored: "a copy for the AFFILIATE, not the vendor: only the vendor's copy of a sale becomes a conversion",
  });
});

test("ClickBank: CB-2, a vendor's test sale of an upsell, maps every field it carries", () => {
  const notification = notificationOf(clickbank.read(post(V.CB2_BODY), V.CB2_SECRET));
  assert.deepEqual(notification, {
    eventKey: 'TESTUP02:TEST_SALE',
    event: 'upsell',
    cartEvent: 'TEST_SALE',
    receipt: 'TESTUP02',
    originalReceipt: 'TESTFE01',
    test: true,
    occurredAt: Date.parse('2026-03-02T18:15:30Z') / 1000,
    payload: V.CB2_PLAINTEXT,
    conversion: CB2_RECORD,
  });
  assertImportable(notification.conversion);
});

test('ClickBank: a notification posted twice has one event key and the same conversion', () => {
  const [once, twice] = [1, 2].map((attempt) => notificationOf(clickbank.read(post(V.CB2_BODY, { receivedAt: RECEIVED_AT + attempt }), V.CB2_SECRET)));
  assert.equal(once!.eventKey, twice!.eventKey);
  assert.deepEqual(once!.conversion, twice!.conversion);
});

const tamperedIv = (): string => JSON.stringify({ ...JSON.parse(V.CB2_BODY), iv: Buffer.from(V.CB2_TAMPERED_IV).toString('base64') });
const corruptedCiphertext = (): string => {
  const body = JSON.parse(V.CB2_BODY);
  return JSON.stringify({ ...body, notification: `c${body.notification.slice(1)}` });
};
const withoutKey = (key: string): string => {
  const { [key]: _dropped, ...rest } = JSON.parse(V.CB2_PLAINTEXT);
  return JSON.stringify(rest);
};
const RANDOM_SECRET = randomSecret();

const CLICKBANK_REFUSALS: { name: string; body: string; secret: string | null; says: RegExp }[] = [
  { name: 'a wrong secret key', body: V.CB2_BODY, secret: 'CBTESTSECRET2025', says: /cannot be decrypted with the secret key/ },
  { name: 'a corrupted ciphertext (padding passes, JSON does not)', body: corruptedCiphertext(), secret: V.CB2_SECRET, says: /cannot be decrypted/ },
  { name: 'an IV flipped so that transactionTime reads transactionTile', body: tamperedIv(), secret: V.CB2_SECRET, says: /lacks transactionTime/ },
  { name: 'a body that is not JSON', body: 'notification=abc&iv=def', secret: V.CB2_SECRET, says: /version 6.0 or later/ },
  { name: 'JSON without the iv', body: '{"notification":"abc="}', secret: V.CB2_SECRET, says: /version 6.0 or later/ },
  { name: 'a notification that is not base64', body: '{"notification":"!!!!","iv":"QTFCMkMzRDRFNUY2MDcxOA=="}', secret: V.CB2_SECRET, says: /not base64/ },
  { name: 'a plaintext that is not JSON', body: clickbankBody(RANDOM_SECRET, 'receipt=X'), secret: RANDOM_SECRET, says: /cannot be decrypted/ },
  { name: 'a plaintext without a receipt', body: clickbankBody(RANDOM_SECRET, withoutKey('receipt')), secret: RANDOM_SECRET, says: /lacks receipt/ },
  { name: 'a plaintext without line items', body: clickbankBody(RANDOM_SECRET, withoutKey('lineItems')), secret: RANDOM_SECRET, says: /lacks lineItems/ },
  { name: 'no secret key connected', body: V.CB2_BODY, secret: null, says: /Secret Key/ },
];

for (const { name, body, secret, says } of CLICKBANK_REFUSALS) {
  test(`ClickBank refuses ${name}, with a 400 that says why`, () => {
    const reason = reasonOf(clickbank.read(post(body), secret), 'refused');
    assert.match(reason, says);
    if (secret) assert.ok(!reason.includes(secret), 'the reason holds no secret');
    assert.deepEqual(clickbank.refused!(reason), { status: 400, contentType: 'text/plain; charset=utf-8', body: `ERROR: ${reason}` });
  });
}

const CLICKBANK_EVENTS: { type: string; overrides?: Record<string, unknown>; event: string; test: boolean; original?: string }[] = [
  { type: 'SALE', event: 'sale', test: false },
  { type: 'TEST_SALE', event: 'sale', test: true },
  { type: 'SALE', overrides: { lineItems: [{ itemNo: 'up-1', accountAmount: 20, quantity: 1, lineItemType: 'UPSELL' }] }, event: 'upsell', test: false },
  { type: 'SALE', overrides: { upsell: { upsellOriginalReceipt: 'FE000000' } }, event: 'upsell', test: false, original: 'FE000000' },
  { type: 'BILL', overrides: { receipt: 'P3RGBKGB-B002' }, event: 'rebill', test: false, original: 'P3RGBKGB' },
  { type: 'TEST_BILL', overrides: { receipt: 'P3RGBKGB-B003' }, event: 'rebill', test: true, original: 'P3RGBKGB' },
  { type: 'RFND', event: 'refund', test: false },
  { type: 'TEST_RFND', event: 'refund', test: true },
  { type: 'CGBK', event: 'chargeback', test: false },
  { type: 'INSF', event: 'other', test: false },
  { type: 'CANCEL-REBILL', event: 'cancel', test: false },
  { type: 'CANCEL-TEST-REBILL', event: 'cancel', test: true },
  { type: 'UNCANCEL-REBILL', event: 'other', test: false },
  { type: 'TEST', event: 'test', test: true },
];

for (const { type, overrides, event, test: isTest, original } of CLICKBANK_EVENTS) {
  test(`ClickBank ${type}${overrides ? ` (${Object.keys(overrides).join(', ')})` : ''} is a${isTest ? ' test' : 'n'} ${event}`, () => {
    const notification = notificationOf(readClickbank(clickbankSale({ transactionType: type, ...overrides })));
    const receipt = (overrides?.receipt as string | undefined) ?? 'FE000001';
    assert.equal(notification.event, event);
    assert.equal(notification.test, isTest);
    assert.equal(notification.receipt, receipt);
    assert.equal(notification.originalReceipt, original ?? null);
    assert.equal(notification.eventKey, `${receipt}:${type}`);
    if (['sale', 'upsell', 'rebill'].includes(event)) {
      assertImportable(notification.conversion);
      assert.equal(notification.conversion!.original_receipt, original);
    } else {
      assert.equal(notification.conversion, undefined);
    }
  });
}

test('ClickBank: an abandoned order is acknowledged and nothing is kept', () => {
  assert.equal(readClickbank({ transactionType: 'ABANDONED_ORDER', vendor: 'acmevend' }).kind, 'acknowledged');
});

test('ClickBank: a sale made with a random secret key goes round, PayPal and both forms of transactionTime', () => {
  for (const [transactionTime, createdAt] of [
    ['2017-09-26T13:38:12-07:00', '2017-09-26T20:38:12Z'],
    ['20200913T120536-0700', '2020-09-13T19:05:36Z'],
  ]) {
    const notification = notificationOf(readClickbank(clickbankSale({ transactionTime })));
    assert.deepEqual(notification.conversion, {
      created_at: createdAt,
      cart_integration: 'clickbank',
      receipt: 'FE000001',
      amount: 49,
      products: [{ sku: 'ebook-01', price: 49, qty: 1 }],
      email: 'buyer@example.com',
      zip_code: '83702',
      country: 'US',
      currency: 'USD',
      payment_method: 'paypal',
      vendor: 'acmevend',
      role: 'VENDOR',
    });
    assert.equal(notification.occurredAt, Date.parse(createdAt!) / 1000);
  }
});

test("ClickBank: an amount that cannot be read stays in the record, and the import's checks name it", () => {
  const conversion = notificationOf(readClickbank(clickbankSale({ totalOrderAmount: 'abc' }))).conversion;
  assert.equal(conversion?.amount, 'abc');
  assert.deepEqual(validateConversion(conversion), { problems: ['amount must be a number such as 19.99, from -1000000000000 to 1000000000000'] });
});

test('ClickBank: before version 7.0 a line item is priced at the account amount, and the prefixed pass-through name wins', () => {
  const notification = notificationOf(
    readClickbank(
      clickbankSale({
        lineItems: [{ itemNo: 'uyhf10', accountAmount: 6.79, quantity: 1, lineItemType: 'ORIGINAL' }],
        vendorVariables: { user_id: 'plain', __user_id: 'prefixed', page_id: '7x' },
      }),
    ),
  );
  assert.deepEqual(notification.conversion?.products, [{ sku: 'uyhf10', price: 6.79, qty: 1 }]);
  assert.equal(notification.conversion?.user_id, 'prefixed');
  // Not a whole number: kept as text, for the import's checks to name.
  assert.equal(notification.conversion?.page_id, '7x');
});

// ---------------------------------------------------------------------------------------------
// Digistore24 and SvenCart

/** A form signed as Digistore24 signs it, encoded as a browser or PHP would (`+` for spaces). */
function signedForm(fields: Record<string, string>, passphrase: string, signatureName = 'sha_sign'): string {
  const params = new URLSearchParams(fields);
  params.append(signatureName, digistoreSignature(formFields(params.toString()), passphrase, { upperCaseKeys: signatureName === 'SHASIGN' }));
  return params.toString();
}

const ds1With = (changes: Record<string, string>): string => {
  const params = new URLSearchParams(V.DS1_BODY);
  for (const [name, value] of Object.entries(changes)) params.set(name, value);
  return params.toString();
};

/** DS-1's fields without its signature, to sign again with another passphrase or other values. */
const DS1_FIELDS = Object.fromEntries([...new URLSearchParams(V.DS1_BODY)].filter(([name]) => name !== 'sha_sign'));

const DS1_RECORD = {
  created_at: '2019-11-08T12:15:08Z',
  cart_integration: 'digistore',
  receipt: 'RJXCW823',
  amount: 37,
  tax_amount: 6.67,
  shipping_amount: 0,
  currency: 'EUR',
  products: [{ sku: '237460', price: 37, qty: 1 }],
  email: 'test.buyer@example.com',
  first_name: 'Test',
  last_name: 'Buyer',
  country: 'IT',
  vendor: 'dotcom',
  // pay_method=test: everything but PayPal is a card.
  payment_method: 'creditcard',
  user_id: 'u_7f3a9c',
};

test("Digistore24's sha_sign: DS-1 to DS-4 give the published signatures, with and without HTML decoding", () => {
  assert.equal(createHash('sha512').update(V.DS2_HASHED).digest('hex').toUpperCase(), V.DS2_SIGNATURE);
  const cases: { fields: Record<string, string>; htmlDecode: boolean; signature: string }[] = [
    { fields: DS1_FIELDS, htmlDecode: false, signature: V.DS1_SIGNATURE },
    { fields: DS1_FIELDS, htmlDecode: true, signature: V.DS1_SIGNATURE },
    { fields: V.DS2_FIELDS, htmlDecode: false, signature: V.DS2_SIGNATURE },
    { fields: V.DS3_FIELDS, htmlDecode: false, signature: V.DS3_SIGNATURE },
    { fields: V.DS4_FIELDS, htmlDecode: false, signature: V.DS4_SIGNATURE_AS_SENT },
    { fields: V.DS4_FIELDS, htmlDecode: true, signature: V.DS4_SIGNATURE_DECODED },
  ];
  for (const { fields, htmlDecode, signature } of cases) {
    assert.equal(digistoreSignature(new Map(Object.entries(fields)), V.DS_PASSPHRASE, { htmlDecode }), signature);
  }
});

test("Digistore24: HTML entities are decoded as PHP's html_entity_decode decodes them, by HTML 4.01's table", () => {
  const cases: [text: string, decoded: string][] = [
    ['Tom &amp; Jerry &lt;3 &gt; &quot;x&quot; &#39;y&#x27;', 'Tom & Jerry <3 > "x" \'y\''],
    ['a&nbsp;b &#8364; &#x20AC; &euro;', 'a\u00a0b € € €'],
    ['&Ouml;sterreich, M&uuml;nchen, &szlig;, &eacute;t&eacute;', 'Österreich, München, ß, été'],
    ['&copy; &reg; &trade; &frac12; &sup2; &Omega; &hearts;', '© ® ™ ½ ² Ω ♥'],
    // Not HTML 4.01's, or no character: left as written.
    ['&apos; &NewLine; &nosuch; &#0; &#xD800; &amp', '&apos; &NewLine; &nosuch; &#0; &#xD800; &amp'],
    ['&OUML; &Amp;', '&OUML; &Amp;'],
  ];
  for (const [text, decoded] of cases) assert.equal(decodeHtmlEntities(text), decoded, text);
});

test('Digistore24: DS-1 verifies and maps every field it carries', () => {
  const notification = notificationOf(digistore.read(post(V.DS1_BODY), V.DS_PASSPHRASE));
  assert.deepEqual(notification, {
    eventKey: '23650507/on_payment',
    event: 'sale',
    cartEvent: 'on_payment',
    receipt: 'RJXCW823',
    originalReceipt: null,
    test: true,
    occurredAt: Date.parse('2019-11-08T12:15:08Z') / 1000,
    payload: V.DS1_BODY,
    conversion: DS1_RECORD,
  });
  assertImportable(notification.conversion);
});

const sign = (fields: Record<string, string>, signature: string) => new URLSearchParams({ ...fields, sha_sign: signature }).toString();

for (const receiver of [digistore, svencart]) {
  test(`${receiver.name}: DS-2 and DS-4 (either implementation's signature) verify, DS-3 (the connection test) is answered OK`, () => {
    for (const body of [sign(V.DS2_FIELDS, V.DS2_SIGNATURE), sign(V.DS4_FIELDS, V.DS4_SIGNATURE_AS_SENT), sign(V.DS4_FIELDS, V.DS4_SIGNATURE_DECODED)]) {
      assert.equal(notificationOf(receiver.read(post(body), V.DS_PASSPHRASE)).event, 'sale');
    }
    assert.equal(receiver.read(post(sign(V.DS3_FIELDS, V.DS3_SIGNATURE)), V.DS_PASSPHRASE).kind, 'acknowledged');
    assert.deepEqual(receiver.accepted(false), { status: 200, contentType: 'text/plain; charset=utf-8', body: 'OK' });
  });

  test(`${receiver.name}: a value with an entity of HTML 4.01 (&Ouml;) verifies when signed over its text as PHP's html_entity_decode gives it`, () => {
    const fields = { event: 'on_payment', address_country_name: '&Ouml;sterreich' };
    // As the 2019 example signs: the decoded text, written out here.
    const signed = `address_country_name=Österreich${V.DS_PASSPHRASE}event=on_payment${V.DS_PASSPHRASE}`;
    const signature = createHash('sha512').update(signed, 'utf8').digest('hex').toUpperCase();
    assert.equal(notificationOf(receiver.read(post(sign(fields, signature)), V.DS_PASSPHRASE)).event, 'sale');
  });

  const refusals: { name: string; body: string; passphrase: string | null; says: RegExp }[] = [
    { name: 'a tampered amount_brutto', body: ds1With({ amount_brutto: '38.00' }), passphrase: V.DS_PASSPHRASE, says: /does not match/ },
    { name: 'another passphrase', body: V.DS1_BODY, passphrase: 'test_passphrase_124', says: /does not match/ },
    {
      name: 'no_signature_passphrase_provided',
      body: ds1With({ sha_sign: 'no_signature_passphrase_provided' }),
      passphrase: V.DS_PASSPHRASE,
      says: /no passphrase/,
    },
    { name: 'no sha_sign at all', body: new URLSearchParams(DS1_FIELDS).toString(), passphrase: V.DS_PASSPHRASE, says: /not signed/ },
    { name: 'no passphrase connected', body: V.DS1_BODY, passphrase: null, says: /no IPN passphrase/ },
  ];
  for (const { name, body, passphrase, says } of refusals) {
    test(`${receiver.name} refuses ${name}, answering exactly "ERROR: invalid sha signature"`, () => {
      const reason = reasonOf(receiver.read(post(body), passphrase), 'refused');
      assert.match(reason, says);
      if (passphrase) assert.ok(!reason.includes(passphrase));
      assert.deepEqual(receiver.refused!(reason), { status: 200, contentType: 'text/plain; charset=utf-8', body: 'ERROR: invalid sha signature' });
    });
  }
}

test('SvenCart: DS-1 signed with its own passphrase maps with cart_integration svencart, and Digistore24’s passphrase fails there', () => {
  const passphrase = randomSecret();
  const body = signedForm(DS1_FIELDS, passphrase);
  const notification = notificationOf(svencart.read(post(body), passphrase));
  assert.deepEqual(notification.conversion, { ...DS1_RECORD, cart_integration: 'svencart' });
  assertImportable(notification.conversion);
  assert.equal(svencart.read(post(V.DS1_BODY), passphrase).kind, 'refused');
});

test('Digistore24: the signature is over the values as PHP decodes the form (+ is a space, %XX a UTF-8 byte)', () => {
  const passphrase = randomSecret();
  const fields = { event: 'on_payment', order_id: 'ORD1', product_name: 'Tom & Jerry + Friends ü', address_first_name: 'Zoë' };
  const plus = signedForm(fields, passphrase);
  assert.match(plus, /product_name=Tom\+%26\+Jerry\+%2B\+Friends\+%C3%BC/);
  const percent = plus.replaceAll('+', '%20');
  for (const body of [plus, percent]) {
    const notification = notificationOf(digistore.read(post(body), passphrase));
    assert.equal(notification.conversion?.first_name, 'Zoë');
  }
});

test('Digistore24: SHASIGN instead of sha_sign signs upper-cased keys', () => {
  const passphrase = randomSecret();
  const body = signedForm({ event: 'on_payment', order_id: 'ORD1', Amount_brutto: '10.00', amount_vat: '1.60' }, passphrase, 'SHASIGN');
  assert.equal(notificationOf(digistore.read(post(body), passphrase)).receipt, 'ORD1');
  // The same form under sha_sign is checked with the keys as sent, and fails.
  assert.equal(digistore.read(post(body.replace('SHASIGN=', 'sha_sign=')), passphrase).kind, 'refused');
});

const DIGISTORE_EVENTS: { fields: Record<string, string>; event: string; receipt: string; original: string | null; eventKey: string }[] = [
  { fields: { event: 'on_payment', upsell_no: '0' }, event: 'sale', receipt: 'ORD1', original: null, eventKey: 'T1/on_payment' },
  { fields: { event: 'on_payment', upsell_no: '2' }, event: 'upsell', receipt: 'ORD1-2', original: 'ORD1', eventKey: 'T1/on_payment' },
  { fields: { event: 'on_payment', pay_sequence_no: '3' }, event: 'rebill', receipt: 'ORD1-P3', original: 'ORD1', eventKey: 'T1/on_payment' },
  // A subscription's first payment is its sale, under the order's own id.
  { fields: { event: 'on_payment', pay_sequence_no: '1' }, event: 'sale', receipt: 'ORD1', original: null, eventKey: 'T1/on_payment' },
  { fields: { event: 'on_payment', upsell_no: '1', pay_sequence_no: '1' }, event: 'upsell', receipt: 'ORD1-1', original: 'ORD1', eventKey: 'T1/on_payment' },
  { fields: { event: 'on_payment', upsell_no: '1', pay_sequence_no: '2' }, event: 'rebill', receipt: 'ORD1-1-P2', original: 'ORD1', eventKey: 'T1/on_payment' },
  { fields: { event: 'on_refund', upsell_no: '1' }, event: 'refund', receipt: 'ORD1-1', original: 'ORD1', eventKey: 'T1/on_refund' },
  { fields: { event: 'on_chargeback' }, event: 'chargeback', receipt: 'ORD1', original: null, eventKey: 'T1/on_chargeback' },
  { fields: { event: 'on_rebill_cancelled', transaction_id: '' }, event: 'cancel', receipt: 'ORD1', original: null, eventKey: 'ORD1/on_rebill_cancelled' },
  { fields: { event: 'on_payment_missed' }, event: 'other', receipt: 'ORD1', original: null, eventKey: 'T1/on_payment_missed' },
];

for (const { fields, event, receipt, original, eventKey } of DIGISTORE_EVENTS) {
  test(`Digistore24 ${new URLSearchParams(fields)} is a ${event} of ${receipt}`, () => {
    const passphrase = randomSecret();
    const body = signedForm(
      { order_id: 'ORD1', transaction_id: 'T1', amount_brutto: '10.00', currency: 'USD', product_id: 'P1', quantity: '1', ...fields },
      passphrase,
    );
    const notification = notificationOf(digistore.read(post(body), passphrase));
    assert.deepEqual(
      {
        event: notification.event,
        receipt: notification.receipt,
        original: notification.originalReceipt,
        eventKey: notification.eventKey,
        test: notification.test,
      },
      { event, receipt, original, eventKey, test: false },
    );
    if (['sale', 'upsell', 'rebill'].includes(event)) {
      assertImportable(notification.conversion);
      assert.equal(notification.conversion?.receipt, receipt);
    } else {
      assert.equal(notification.conversion, undefined);
    }
  });
}

test("Digistore24: custom packs the funnel's values as user.page.version; an affiliate's payout and tracking keys are kept", () => {
  const passphrase = randomSecret();
  const read = (fields: Record<string, string>) =>
    notificationOf(
      digistore.read(
        post(signedForm({ event: 'on_payment', order_id: 'O', amount_brutto: '100.00', product_id: 'P', quantity: '3', ...fields }, passphrase)),
        passphrase,
      ),
    ).conversion!;
  assert.deepEqual(
    read({
      custom: 'u_7f3a9c.12.b',
      affiliate_name: 'affjoe',
      amount_affiliate: '25.00',
      trackingkey: 'tk',
      campaignkey: 'ck',
      click_id: 'tk',
      upsell_no: '1',
    }),
    {
      created_at: '2026-03-02T11:15:30Z',
      cart_integration: 'digistore',
      receipt: 'O-1',
      original_receipt: 'O',
      amount: 100,
      products: [{ sku: 'P', price: 33.33, qty: 3 }],
      affiliate: 'affjoe',
      affiliate_payouts: [25],
      tracking_codes: ['tk', 'ck'],
      upsell_step: 1,
      user_id: 'u_7f3a9c',
      page_id: 12,
      page_version: 'b',
    },
  );
  assert.equal(read({ custom: 'u.7f3a9c' }).user_id, 'u.7f3a9c');
  assert.equal(read({ custom: 'u.7f3a9c' }).page_id, undefined);
  assert.equal(read({ pay_method: 'paypal' }).payment_method, 'paypal');
});

test('Digistore24: order_date_time is read in Berlin time, summer and winter', () => {
  assert.equal(epochOfLocalTime('2019-11-08 13:15:08', 'Europe/Berlin'), Date.parse('2019-11-08T12:15:08Z') / 1000);
  assert.equal(epochOfLocalTime('2026-07-01 12:00:00', 'Europe/Berlin'), Date.parse('2026-07-01T10:00:00Z') / 1000);
  // The hour that does not exist when clocks go forward is read as the hour after.
  assert.equal(epochOfLocalTime('2026-03-29 02:30:00', 'Europe/Berlin'), Date.parse('2026-03-29T01:30:00Z') / 1000);
  assert.equal(epochOfLocalTime('08.11.2019 13:15', 'Europe/Berlin'), undefined);
});

// ---------------------------------------------------------------------------------------------
// BuyGoods

const BUYGOODS_RECORD = {
  created_at: '2022-10-24T10:53:09Z',
  cart_integration: 'buygoods',
  receipt: '290650',
  amount: 56.24,
  tax_amount: 11.25,
  shipping_amount: 0,
  currency: 'USD',
  products: [{ sku: '112', price: 44.99, qty: 1 }],
  email: 'test.buyer@example.com',
  first_name: 'Test',
  last_name: 'Buyer',
  zip_code: '83702',
  country: 'US',
  vendor: '6490',
  referrer: 'mc.sendgrid.com',
  tracking_codes: ['248503967', '20599', 'soulmate'],
  mobile: false,
};

test('BuyGoods: the test IPN maps every field it carries (keys sent twice are tolerated)', () => {
  const notification = notificationOf(buygoods.read(post(V.BUYGOODS_BODY), null));
  assert.deepEqual(notification, {
    eventKey: '139038/neworder',
    event: 'sale',
    cartEvent: 'neworder',
    receipt: '290650',
    originalReceipt: null,
    test: true,
    occurredAt: Date.parse('2022-10-24T10:53:09Z') / 1000,
    payload: V.BUYGOODS_BODY,
    conversion: BUYGOODS_RECORD,
  });
  assertImportable(notification.conversion);
  assert.equal(new Set([...new URLSearchParams(V.BUYGOODS_BODY).keys()]).size, 112);
});

test('BuyGoods: a key sent twice keeps its last value; a GET carries the same fields; a repeat has the same key', () => {
  const twice = notificationOf(buygoods.read(post(`${V.BUYGOODS_BODY}&product_codename=999`), null));
  assert.deepEqual(twice.conversion?.products, [{ sku: '999', price: 44.99, qty: 1 }]);
  const byGet = notificationOf(buygoods.read(get(`/hooks/buygoods/t?${V.BUYGOODS_BODY}`), null));
  assert.deepEqual(byGet.conversion, BUYGOODS_RECORD);
  assert.equal(byGet.eventKey, '139038/neworder');
  // The query string again from the parsed query: the same pairs, a repeated name's next to each other.
  const pairs = (query: string) => [...new URLSearchParams(query)].map((pair) => pair.join('=')).sort();
  assert.deepEqual(pairs(byGet.payload), pairs(V.BUYGOODS_BODY));
});

test("BuyGoods: its own user_id is its customer's; only the funnel's __ names pass through; a phone's user agent is mobile", () => {
  const body = `${V.BUYGOODS_BODY}&__user_id=u_7f3a9c&__page_id=12&__page_version=b&__utm_source=fb&browser_user_agent=Mozilla%2F5.0+(iPhone%3B+CPU+iPhone+OS+17_0)&aff_id=AFF9&aff_commission=12.50&payment_cardtype=Visa+ending+with+1111`;
  const conversion = notificationOf(buygoods.read(post(body), null)).conversion!;
  assert.deepEqual(
    { ...conversion },
    {
      ...BUYGOODS_RECORD,
      user_id: 'u_7f3a9c',
      page_id: 12,
      page_version: 'b',
      utm_source: 'fb',
      mobile: true,
      affiliate: 'AFF9',
      affiliate_payouts: [12.5],
      payment_method: 'creditcard',
    },
  );
  assertImportable(conversion);
});

const BUYGOODS_EVENTS: { changes: Record<string, string>; event: string; original: string | null }[] = [
  { changes: { action_type: 'neworder', flag_upsell: '1', funnel_step: '2' }, event: 'upsell', original: '5AFZ6R9A' },
  { changes: { action_type: 'rebill' }, event: 'rebill', original: null },
  { changes: { action_type: 'refund' }, event: 'refund', original: null },
  { changes: { action_type: 'chargeback' }, event: 'chargeback', original: null },
  { changes: { action_type: 'cancel' }, event: 'cancel', original: null },
  { changes: { action_type: 'canceledfromrebill' }, event: 'cancel', original: null },
  { changes: { action_type: 'failedrebill' }, event: 'other', original: null },
];

for (const { changes, event, original } of BUYGOODS_EVENTS) {
  test(`BuyGoods ${new URLSearchParams(changes)} is a ${event}`, () => {
    const params = new URLSearchParams(V.BUYGOODS_BODY);
    for (const [name, value] of Object.entries(changes)) params.set(name, value);
    const notification = notificationOf(buygoods.read(post(params.toString()), null));
    assert.equal(notification.event, event);
    assert.equal(notification.receipt, '290650');
    assert.equal(notification.originalReceipt, original);
    assert.equal(notification.eventKey, `139038/${changes.action_type}`);
    if (['sale', 'upsell', 'rebill'].includes(event)) assertImportable(notification.conversion);
    else assert.equal(notification.conversion, undefined);
    if (event === 'upsell') assert.equal(notification.conversion?.upsell_step, 2);
  });
}

// ---------------------------------------------------------------------------------------------
// Konnektive and Sticky.io

const KONNEKTIVE_RECORD = {
  created_at: '2026-03-02T11:15:30Z',
  cart_integration: 'konnektive',
  receipt: 'A1B2C3D4E5',
  amount: 69.95,
  currency: 'USD',
  email: 'test.buyer@example.com',
  first_name: 'Test',
  last_name: 'Buyer',
  zip_code: '83702',
  country: 'US',
  affiliate: 'AFF123',
  tracking_codes: ['fbads01'],
  user_id: 'u_7f3a9c',
  page_id: 12,
  page_version: 'b',
};

const STICKY_RECORD = {
  created_at: '2026-03-02T11:15:30Z',
  cart_integration: 'stickyio',
  receipt: '100234',
  amount: 59.95,
  tax_amount: 0,
  email: 'test.buyer@example.com',
  first_name: 'Test',
  last_name: 'Buyer',
  zip_code: '83702',
  country: 'US',
  affiliate: 'AFF123',
  tracking_codes: ['fbads01', 'abc123'],
  user_id: 'u_7f3a9c',
  page_id: 12,
  page_version: 'b',
};

test('Konnektive: the documented GET postback maps every field it carries, at the time received', () => {
  const notification = notificationOf(konnektive.read(get(V.KONNEKTIVE_URL), null));
  assert.deepEqual(notification, {
    eventKey: 'A1B2C3D4E5/new_sale',
    event: 'sale',
    cartEvent: 'new_sale',
    receipt: 'A1B2C3D4E5',
    originalReceipt: null,
    test: false,
    occurredAt: undefined,
    payload: V.KONNEKTIVE_URL.split('?')[1],
    conversion: KONNEKTIVE_RECORD,
  });
  assertImportable(notification.conversion);
});

test("Sticky.io: the postback with CBSplit's names maps every field it carries", () => {
  const notification = notificationOf(stickyio.read(get(V.STICKY_URL), null));
  assert.deepEqual(notification, {
    eventKey: '100234/new_order',
    event: 'sale',
    cartEvent: 'new_order',
    receipt: '100234',
    originalReceipt: null,
    test: true,
    occurredAt: undefined,
    payload: V.STICKY_URL.split('?')[1],
    conversion: STICKY_RECORD,
  });
  assertImportable(notification.conversion);
});

for (const receiver of [konnektive, stickyio]) {
  test(`${receiver.name}: a postback without event is invalid, saying how to add it`, () => {
    const url = (receiver === konnektive ? V.KONNEKTIVE_URL : V.STICKY_URL).replace(/event=\w+&/, '');
    assert.equal(
      reasonOf(receiver.read(get(url), null), 'invalid'),
      'event is missing: add a static field event=sale (or upsell, rebill, refund, chargeback, cancel) to the postback',
    );
    const notJson = 'the body starts with { but is not one JSON object nested at most 32 deep: send a form, or valid JSON';
    assert.equal(reasonOf(receiver.read(post('{"event": '), null), 'invalid'), notJson);
    // Written back as text by recursion, thousands of levels would exhaust the stack: a 500.
    const deep = `{"event":"refund","order_id":"D1","x":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    assert.equal(reasonOf(receiver.read(post(deep), null), 'invalid'), notJson);
    const deepList = receiver.read(post(`event=sale&order_id=D2&total=1&tracking_codes=${'['.repeat(5000)}${']'.repeat(5000)}`), null);
    assert.equal(deepList.kind, 'notification', 'a deep list in a form field is read as text, without recursion');
  });

  const words: [string, string][] = [
    ['sale', 'sale'],
    ['new_sale', 'sale'],
    ['NEW_ORDER', 'sale'],
    ['upsell', 'upsell'],
    ['bump', 'bump'],
    ['recurring', 'rebill'],
    ['rebill', 'rebill'],
    ['refund', 'refund'],
    ['chargeback', 'chargeback'],
    ['cancel', 'cancel'],
    ['test', 'test'],
    ['decline', 'other'],
  ];
  test(`${receiver.name}: the static event word names the event; only purchases have a conversion`, () => {
    for (const [word, event] of words) {
      const notification = notificationOf(receiver.read(get(`/h?event=${word}&order_id=O1&transaction_id=T9&amount=5`), null));
      assert.equal(notification.event, event, word);
      assert.equal(notification.eventKey, `O1/T9/${word}`);
      assert.equal(notification.receipt, 'O1');
      assert.equal(notification.test, event === 'test');
      if (['sale', 'upsell', 'bump', 'rebill'].includes(event)) assertImportable(notification.conversion);
      else assert.equal(notification.conversion, undefined);
    }
  });
}

for (const receiver of [buygoods, konnektive, stickyio]) {
  test(`${receiver.name} signs nothing: no secret, and OK when accepted (a wrong URL token is the service's 404)`, () => {
    assert.equal(receiver.needsSecret, false);
    assert.equal(receiver.refused, undefined);
    assert.deepEqual(receiver.accepted(true), { status: 200, contentType: 'text/plain; charset=utf-8', body: 'OK' });
  });
}

test("Konnektive: a POSTed form or JSON body with Konnektive's own names, the funnel's values in custom1 to custom3", () => {
  const fields = {
    event: 'upsell',
    orderId: 'K-77',
    transactionId: 'TX1',
    totalAmount: '19.00',
    emailAddress: 'buyer@example.com',
    firstName: 'Ann',
    lastName: 'Lee',
    postalCode: '10115',
    country: 'Germany',
    currencyCode: 'eur',
    affId: 'A1',
    sourceValue1: 'fb',
    sourceValue2: 'ads',
    paySource: 'CREDITCARD',
    custom1: 'u_1',
    custom2: '4',
    custom3: 'c',
    original_receipt: 'K-76',
  };
  const expected = {
    created_at: '2026-03-02T11:15:30Z',
    cart_integration: 'konnektive',
    receipt: 'K-77',
    original_receipt: 'K-76',
    amount: 19,
    email: 'buyer@example.com',
    first_name: 'Ann',
    last_name: 'Lee',
    zip_code: '10115',
    country: 'DE',
    currency: 'EUR',
    affiliate: 'A1',
    tracking_codes: ['fb', 'ads'],
    payment_method: 'creditcard',
    user_id: 'u_1',
    page_id: 4,
    page_version: 'c',
  };
  for (const body of [new URLSearchParams(fields).toString(), JSON.stringify({ ...fields, totalAmount: 19 })]) {
    const notification = notificationOf(konnektive.read(post(body), null));
    assert.deepEqual(notification.conversion, expected);
    assert.equal(notification.eventKey, 'K-77/TX1/upsell');
    assert.equal(notification.originalReceipt, 'K-76');
    assert.equal(notification.payload, body);
  }
  // The funnel's own names win over the custom fields, the __ names over both.
  const named = notificationOf(konnektive.read(get('/h?event=sale&order_id=O&custom1=c1&user_id=plain&__user_id=prefixed&custom2=3'), null)).conversion!;
  assert.equal(named.user_id, 'prefixed');
  assert.equal(named.page_id, 3);
});

test("Sticky.io: a PUT with JSON in Sticky.io's order names, the test card flag set", () => {
  const body = JSON.stringify({
    event: 'rebill',
    order_id: 200,
    order_total: '29.95',
    order_sales_tax_amount: '2.10',
    email_address: 'buyer@example.com',
    billing_postcode: 'SW1A 1AA',
    billing_country: 'United Kingdom',
    affid: 'AF',
    sid: 's1',
    c2: 'c2v',
    opt: 'o',
    is_test_cc: '1',
    mobile: 'true',
    __utm_campaign: 'spring',
  });
  const notification = notificationOf(stickyio.read(post(body, { method: 'PUT' }), null));
  assert.equal(notification.test, true);
  assert.equal(notification.event, 'rebill');
  assert.deepEqual(notification.conversion, {
    created_at: '2026-03-02T11:15:30Z',
    cart_integration: 'stickyio',
    receipt: '200',
    amount: 29.95,
    tax_amount: 2.1,
    email: 'buyer@example.com',
    zip_code: 'SW1A 1AA',
    country: 'GB',
    affiliate: 'AF',
    tracking_codes: ['s1', 'c2v', 'o'],
    mobile: true,
    utm_campaign: 'spring',
  });
  assertImportable(notification.conversion);
});

test('A postback without an order id still has a stable event key, and its conversion lacks the receipt for the import to name', () => {
  const [once, again] = [1, 2].map(() => notificationOf(stickyio.read(get('/h?event=sale&order_total=5'), null)));
  assert.equal(once!.eventKey, again!.eventKey);
  assert.match(once!.eventKey, /^sha256:[0-9a-f]{32}\/sale$/);
  assert.deepEqual(validateConversion(once!.conversion), { problems: ['receipt is required'] });
});

// ---------------------------------------------------------------------------------------------
// Our generic webhook

function signed(body: string, secret: string, t: number = RECEIVED_AT, receivedAt: number = RECEIVED_AT): CartRequest {
  return post(body, { headers: { 'x-signature': `t=${t},v1=${genericSignature(secret, t, body)}` }, receivedAt });
}

const GEN1_NOTIFICATION = {
  eventKey: 'evt_01HZX3K9Q4',
  event: 'sale',
  cartEvent: 'sale',
  receipt: 'SC-100234',
  originalReceipt: null,
  test: true,
  occurredAt: V.GEN1_T,
  payload: V.GEN1_BODY,
  conversion: {
    created_at: '2026-03-02T11:15:30Z',
    receipt: 'SC-100234',
    currency: 'USD',
    amount: 49,
    tax_amount: 0,
    shipping_amount: 0,
    products: [{ sku: 'ebook-01', price: 49, qty: 1 }],
    email: 'test.buyer@example.com',
    first_name: 'Test',
    last_name: 'Buyer',
    zip_code: '83702',
    country: 'US',
    affiliate: 'affjoe',
    vendor: 'acmevend',
    payment_method: 'creditcard',
    user_id: 'u_7f3a9c',
    page_id: 12,
    page_version: 'b',
    tracking_codes: ['fbads01'],
  },
};

test('Generic: GEN-1 verifies and maps, the passthrough merged in', () => {
  assert.equal(genericSignature(V.GEN1_SECRET, V.GEN1_T, V.GEN1_BODY), V.GEN1_HEADER.split('v1=')[1]);
  const notification = notificationOf(generic.read(post(V.GEN1_BODY, { headers: { 'x-signature': V.GEN1_HEADER } }), V.GEN1_SECRET));
  assert.deepEqual(notification, GEN1_NOTIFICATION);
  // It names no cart: the record lacks cart_integration until the sender says it.
  assertImportable(notification.conversion, { cart_integration: 'clickbank' });
});

const GEN1_REFUSALS: { name: string; request: () => CartRequest; secret: string | null; says: RegExp }[] = [
  {
    name: 'a changed body (amount 49.01)',
    request: () => post(V.GEN1_BODY.replace('"amount":49', '"amount":49.01'), { headers: { 'x-signature': V.GEN1_HEADER } }),
    secret: V.GEN1_SECRET,
    says: /does not match/,
  },
  ...[1, -1].map((shift) => ({
    name: `a timestamp shifted by ${shift} s`,
    request: () => post(V.GEN1_BODY, { headers: { 'x-signature': V.GEN1_HEADER.replace(`t=${V.GEN1_T}`, `t=${V.GEN1_T + shift}`) } }),
    secret: V.GEN1_SECRET,
    says: /does not match/,
  })),
  ...[301, -301].map((late) => ({
    name: `a request received ${late} s after it was signed`,
    request: () => post(V.GEN1_BODY, { headers: { 'x-signature': V.GEN1_HEADER }, receivedAt: V.GEN1_T + late }),
    secret: V.GEN1_SECRET,
    says: /^the X-Signature timestamp is more than 5 minutes from now: sign each request when it is sent$/,
  })),
  { name: 'another secret', request: () => post(V.GEN1_BODY, { headers: { 'x-signature': V.GEN1_HEADER } }), secret: 'whsec_other', says: /does not match/ },
  { name: 'no X-Signature', request: () => post(V.GEN1_BODY), secret: V.GEN1_SECRET, says: /header is missing/ },
  {
    name: 'a garbled X-Signature',
    request: () => post(V.GEN1_BODY, { headers: { 'x-signature': 'sha256=abc' } }),
    secret: V.GEN1_SECRET,
    says: /header is not t=/,
  },
  { name: 'no secret connected', request: () => post(V.GEN1_BODY, { headers: { 'x-signature': V.GEN1_HEADER } }), secret: null, says: /no webhook secret/ },
];

for (const { name, request, secret, says } of GEN1_REFUSALS) {
  test(`Generic refuses ${name} with a 401 whose JSON says why`, () => {
    const reason = reasonOf(generic.read(request(), secret), 'refused');
    assert.match(reason, says);
    if (secret) assert.ok(!reason.includes(secret));
    assert.deepEqual(generic.refused!(reason), { status: 401, contentType: 'application/json; charset=utf-8', body: JSON.stringify(reason) });
  });
}

test('Generic: a request received within 300 s of its signing is accepted, and any one of several v1 signatures may match', () => {
  const header = `t=${V.GEN1_T},v1=${'0'.repeat(64)},v1=${V.GEN1_HEADER.split('v1=')[1]}`;
  for (const receivedAt of [V.GEN1_T + 300, V.GEN1_T - 300]) {
    assert.equal(generic.read(post(V.GEN1_BODY, { headers: { 'x-signature': header }, receivedAt }), V.GEN1_SECRET).kind, 'notification');
  }
  assert.deepEqual(generic.accepted(false), { status: 200, contentType: 'application/json; charset=utf-8', body: '{"ok":true}' });
  assert.deepEqual(generic.accepted(true), { status: 200, contentType: 'application/json; charset=utf-8', body: '{"ok":true,"duplicate":true}' });
});

test('Generic: an event signed with a random secret goes round; refunds and test pings have no conversion', () => {
  const secret = randomBytes(24).toString('base64url');
  const event = {
    event_id: 'e1',
    event: 'rebill',
    receipt: 'R-2',
    original_receipt: 'R-1',
    cart_integration: 'svencart',
    amount: '12.5',
    __page_id: '9',
    page_id: '1',
  };
  const rebill = notificationOf(generic.read(signed(JSON.stringify(event), secret), secret));
  assert.deepEqual(rebill.conversion, {
    created_at: '2026-03-02T11:15:30Z',
    receipt: 'R-2',
    original_receipt: 'R-1',
    cart_integration: 'svencart',
    amount: 12.5,
    page_id: 9,
  });
  assert.equal(rebill.originalReceipt, 'R-1');
  assert.equal(rebill.occurredAt, undefined);
  assertImportable(rebill.conversion);
  for (const kind of ['refund', 'chargeback', 'cancel', 'test']) {
    const notification = notificationOf(generic.read(signed(JSON.stringify({ ...event, event: kind }), secret), secret));
    assert.equal(notification.event, kind);
    assert.equal(notification.conversion, undefined);
    assert.equal(notification.receipt, 'R-2');
  }
});

test("Generic: a field the import does not know stays in the record, for the import's checks to name", () => {
  const secret = randomSecret();
  const body = JSON.stringify({ event_id: 'e2', event: 'sale', receipt: 'R', cart_integration: 'clickbank', colour: 'red', country: '' });
  const conversion = notificationOf(generic.read(signed(body, secret), secret)).conversion;
  assert.equal(conversion?.colour, 'red');
  assert.equal('country' in conversion!, false, 'an empty value is no value');
  const checked = validateConversion(conversion);
  assert.ok('problems' in checked && checked.problems[0]!.startsWith('unknown field colour'));
});

const GENERIC_INVALID: { body: string; says: RegExp }[] = [
  { body: 'event_id=e1&event=sale', says: /the body must be one JSON object/ },
  { body: '[{"event_id":"e1","event":"sale"}]', says: /the body must be one JSON object/ },
  { body: '{"event":"sale","receipt":"R"}', says: /^event_id is missing/ },
  { body: '{"event_id":"e1","event":"purchase"}', says: /^event must be one of sale, upsell, bump, rebill, refund, chargeback, cancel, test$/ },
  { body: '{"event_id":"e1"}', says: /^event must be one of/ },
  { body: '{"event_id":"e1","event":"sale","passthrough":"u_1"}', says: /^passthrough must be a JSON object$/ },
  { body: '{"event_id":"e1","event":"sale","test":"yes"}', says: /^test must be true or false$/ },
];

for (const { body, says } of GENERIC_INVALID) {
  test(`Generic: ${body} is signed but invalid`, () => {
    const secret = randomSecret();
    assert.match(reasonOf(generic.read(signed(body, secret), secret), 'invalid'), says);
  });
}

// ---------------------------------------------------------------------------------------------
// Every receiver, and the shared helpers

test('Every receiver is listed under its own name, with the methods its cart uses', () => {
  assert.deepEqual(Object.keys(RECEIVER_BY_NAME).sort(), [...RECEIVERS].sort());
  const methods = Object.fromEntries(Object.values(RECEIVER_BY_NAME).map((receiver) => [receiver.name, receiver.methods]));
  assert.deepEqual(methods, {
    clickbank: ['POST'],
    digistore: ['POST'],
    svencart: ['POST'],
    buygoods: ['GET', 'POST'],
    konnektive: ['GET', 'POST'],
    stickyio: ['GET', 'POST', 'PUT'],
    generic: ['POST'],
  });
  for (const [name, receiver] of Object.entries(RECEIVER_BY_NAME)) assert.equal(receiver.name, name);
  assert.deepEqual(
    Object.values(RECEIVER_BY_NAME)
      .filter((receiver) => receiver.needsSecret)
      .map((receiver) => receiver.name),
    ['clickbank', 'digistore', 'svencart', 'generic'],
  );
});

test('Country names and codes become two upper-case letters; a name not known is kept for the import to name', () => {
  const cases: [string, string | undefined][] = [
    ['United States', 'US'],
    ['USA', 'US'],
    ['united states of america', 'US'],
    ['us', 'US'],
    ['UK', 'GB'],
    ['United Kingdom', 'GB'],
    ['Germany', 'DE'],
    ['Curaçao', 'CW'],
    ['Curacao', 'CW'],
    ['Serbia', 'RS'],
    ['Russia', 'RU'],
    ['Vietnam', 'VN'],
    ['Yemen', 'YE'],
    ['Myanmar', 'MM'],
    ["Côte d'Ivoire", 'CI'],
    ['Ivory Coast', 'CI'],
    ['Bosnia and Herzegovina', 'BA'],
    ['Saint Lucia', 'LC'],
    ['Turkey', 'TR'],
    ['  south   korea ', 'KR'],
    ['Atlantis', 'Atlantis'],
    ['European Union', 'European Union'],
    ['', undefined],
  ];
  for (const [text, code] of cases) assert.equal(countryOf(text), code, text);
});

test('Forms decode as PHP decodes $_POST, and a request merges its query string under its body', () => {
  assert.deepEqual(
    [...formFields('a=1+2&b=%C3%BC%26&a=3&c=')],
    [
      ['a', '3'],
      ['b', 'ü&'],
      ['c', ''],
    ],
  );
  const request: CartRequest = {
    method: 'POST',
    query: { a: ['q1', 'q2'], b: 'q' },
    rawBody: Buffer.from('{"b":"body","n":5,"x":null}'),
    headers: {},
    receivedAt: 0,
  };
  const parsed = requestFields(request);
  assert.ok('fields' in parsed);
  assert.deepEqual(Object.fromEntries(parsed.fields), { a: 'q2', b: 'body', n: '5' });
  const getRequest = { ...request, method: 'GET' };
  const fromQuery = requestFields(getRequest);
  assert.ok('fields' in fromQuery);
  assert.deepEqual(Object.fromEntries(fromQuery.fields), { a: 'q2', b: 'q' });
});

test('Times with offsets in both ISO 8601 forms, payment methods, and comparing secrets', () => {
  assert.equal(epochOfIso8601('2017-09-26T13:38:12-07:00'), Date.parse('2017-09-26T20:38:12Z') / 1000);
  assert.equal(epochOfIso8601('20200913T120536-0700'), Date.parse('2020-09-13T19:05:36Z') / 1000);
  assert.equal(epochOfIso8601('20200913T120536Z'), Date.parse('2020-09-13T12:05:36Z') / 1000);
  assert.equal(epochOfIso8601('yesterday'), undefined);
  const methods: [string | undefined, string | undefined][] = [
    ['PYPL', 'paypal'],
    ['PayPal Express', 'paypal'],
    ['VISA', 'creditcard'],
    ['ELV', 'creditcard'],
    ['N/A', undefined],
    [undefined, undefined],
  ];
  for (const [text, method] of methods) assert.equal(paymentMethodOf(text), method, text);
  assert.equal(sameSecret('abc', 'abc'), true);
  assert.equal(sameSecret('abc', 'abd'), false);
  assert.equal(sameSecret('abc', 'abcd'), false);
});
