// BuyGoods' IPN: form fields POSTed (or sent as a query string) to the URLs set per event in
// BuyGoods' IPN settings. BuyGoods signs nothing (its `token` fields follow no published
// algorithm): the secret token in the URL, checked before the receiver runs, is the only check.
import type { CartRequest, EventType, Receiver, Verdict } from '../notification.js';
import {
  contentKey,
  conversionFor,
  distinct,
  epochOfLocalTime,
  type FieldSources,
  type Fields,
  first,
  isMobileAgent,
  isSet,
  numberOf,
  passThrough,
  payloadOf,
  recordFromFields,
  requestFields,
  timesOf,
  UNSIGNED_REPLIES,
} from './fields.js';

/** Where each field comes from, first name found wins. */
const SOURCES: FieldSources = {
  receipt: ['order_id'],
  // The gross with tax and shipping, as a number: `total` can be "FREE" or "$96.80".
  amount: ['total_clean'],
  tax_amount: ['taxes'],
  shipping_amount: ['shipping_cost_total', 'shipping_cost'],
  currency: ['currency'],
  email: ['customer_emailaddress'],
  first_name: ['customer_firstname', 'billing_firstname'],
  last_name: ['customer_lastname', 'billing_lastname'],
  zip_code: ['customer_zip', 'zip', 'billing_zip'],
  // The two-letter code is often empty; the country's name ("United States") is then mapped.
  country: ['country_2letter', 'country', 'customer_country', 'billing_country'],
  vendor: ['account_id'],
  referrer: ['referrer_url'],
  upsell_step: ['funnel_step'],
  upsell_group: ['funnel_codename'],
  // The buy link's sub-ids and the affiliate's tracking values.
  tracking_codes: ['subid', 'subid2', 'subid3', 'subid4', 'subid5', 'sid', 'sid2', 'vid1', 'vid2', 'vid3', 'tid', 'traffic_source'],
};

function eventOf(actionType: string, fields: Fields): EventType {
  switch (actionType) {
    case 'neworder':
      // An upsell comes as a new order of its own, flagged.
      return isSet(first(fields, 'flag_upsell')) ? 'upsell' : 'sale';
    case 'rebill':
    case 'refund':
    case 'chargeback':
      return actionType;
    case 'cancel':
    case 'canceledfromrebill':
      return 'cancel';
    default:
      // failedrebill, abandon, newcustomer, tracking, ...
      return 'other';
  }
}

/** BuyGoods writes `rr_createdate` in GMT, without saying so in the value. */
const epochOfGmt = (text: string) => epochOfLocalTime(text, 'UTC');

function read(request: CartRequest): Verdict {
  const parsed = requestFields(request);
  if ('problem' in parsed) return { kind: 'invalid', reason: parsed.problem };
  const { fields } = parsed;
  const actionType = first(fields, 'action_type');
  if (actionType === undefined) return { kind: 'invalid', reason: "action_type is missing: give this URL as an IPN URL in BuyGoods' IPN settings" };

  const event = eventOf(actionType, fields);
  const payload = payloadOf(request);
  const { createdAt, occurredAt } = timesOf(first(fields, 'rr_createdate'), epochOfGmt, request.receivedAt);
  // The first order of an upsell chain: its orders share the global order id.
  const originalReceipt = isSet(first(fields, 'flag_upsell')) ? first(fields, 'order_id_global') : undefined;
  const affiliate = affiliateOf(fields);
  const commission = first(fields, 'aff_commission');
  const userAgent = first(fields, 'browser_user_agent');
  const record = {
    ...recordFromFields(fields, SOURCES),
    created_at: createdAt,
    cart_integration: 'buygoods',
    original_receipt: originalReceipt,
    products: productsOf(fields),
    affiliate,
    affiliate_payouts: affiliate !== undefined && commission !== undefined ? [numberOf(commission)] : undefined,
    payment_method: paymentMethodOf(fields),
    mobile: userAgent === undefined ? undefined : isMobileAgent(userAgent),
    // BuyGoods' own `user_id` is its customer's id: only the funnel's `__` names are ours.
    ...passThrough((name) => first(fields, name), { prefixedOnly: true }),
  };
  return {
    kind: 'notification',
    notification: {
      eventKey: `${first(fields, 'storecheckedoutcarts_id', 'order_id') ?? contentKey(payload)}/${actionType}`,
      event,
      cartEvent: actionType,
      receipt: first(fields, 'order_id') ?? null,
      originalReceipt: originalReceipt ?? null,
      test: isSet(first(fields, 'is_test')),
      occurredAt,
      payload,
      conversion: conversionFor(event, record),
    },
  };
}

/** The affiliate's id; BuyGoods sends `aff_id=0` when there is none. */
function affiliateOf(fields: Fields): string | undefined {
  const affiliate = first(fields, 'aff_id');
  return affiliate === '0' ? undefined : affiliate;
}

/** One product per IPN. */
function productsOf(fields: Fields): unknown[] | undefined {
  const sku = first(fields, 'product_codename', 'sku');
  if (sku === undefined) return undefined;
  return [{ sku, price: numberOf(first(fields, 'product_price')), qty: numberOf(first(fields, 'product_quantity') ?? '1') }];
}

/**
 * PayPal when BuyGoods' payment fields say so, a card when they name one ("Visa ending with
 * 1111"); `N/A` or nothing: left out.
 */
function paymentMethodOf(fields: Fields): 'creditcard' | 'paypal' | undefined {
  const said = distinct([first(fields, 'payment_method'), first(fields, 'payment_cardtype')]).join(' ');
  if (/paypal/i.test(said)) return 'paypal';
  return first(fields, 'payment_cardtype') !== undefined || /visa|master|amex|american express|discover|card/i.test(said) ? 'creditcard' : undefined;
}

export const buygoods: Receiver = {
  name: 'buygoods',
  methods: ['GET', 'POST'],
  needsSecret: false,
  read,
  ...UNSIGNED_REPLIES,
};
