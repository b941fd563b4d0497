// Cart notifications as carts send them, built in the tests with the tests' own secrets.
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/** A random secret of the shape carts use (ClickBank: up to 16 capitals and digits). */
export function randomSecret(length = 16): string {
  return randomBytes(length).toString('hex').toUpperCase().slice(0, length);
}

/** Our generic webhook's signature header for `body`, signed at `t` (epoch seconds). */
export function genericSignatureHeader(secret: string, body: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/**
 * A ClickBank INS body: the notification (an object, or its text as sent) encrypted as ClickBank
 * does: AES-256-CBC, the key from SHA-1 of the secret key, an IV of 16 hex characters.
 */
export function clickbankBody(secret: string, notification: object | string, iv = Buffer.from(randomBytes(8).toString('hex').toUpperCase(), 'ascii')): string {
  const key = Buffer.from(createHash('sha1').update(secret).digest('hex').slice(0, 32), 'ascii');
  const plaintext = typeof notification === 'string' ? notification : JSON.stringify(notification);
  const cipher = createCipheriv('aes-256-cbc', key, iv);
  const encrypted = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return JSON.stringify({ notification: encrypted.toString('base64'), iv: iv.toString('base64') });
}

/** A ClickBank notification of a sale, as the vendor receives it. */
export function clickbankSale(receipt: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    transactionTime: '2026-03-02T10:15:30-08:00',
    receipt,
    transactionType: 'SALE',
    vendor: 'acmevend',
    role: 'VENDOR',
    totalOrderAmount: 49.0,
    totalTaxAmount: 0,
    totalShippingAmount: 0,
    currency: 'USD',
    paymentMethod: 'VISA',
    lineItems: [{ itemNo: 'ebook-01', productTitle: 'E-book', accountAmount: 30.1, quantity: 1, lineItemType: 'ORIGINAL', productPrice: 49.0 }],
    customer: { billing: { email: 'buyer@example.com', firstName: 'Ann', lastName: 'Buyer', address: { postalCode: '83702', country: 'US' } } },
    upsell: {},
    version: 7.0,
    attemptCount: 1,
    vendorVariables: { __user_id: 'u_1', utm_source: 'facebook' },
    ...overrides,
  };
}

/** A generic webhook event of a sale. */
export function genericEvent(eventId: string, receipt: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_id: eventId,
    event: 'sale',
    occurred_at: '2026-03-02T11:15:30Z',
    cart_integration: 'digistore',
    receipt,
    currency: 'USD',
    amount: 49,
    email: 'buyer@example.com',
    utm_source: 'newsletter',
    ...overrides,
  };
}
