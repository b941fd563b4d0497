// Konnektive (Checkout Champ) postbacks: an "Export Webhook Profile" of type Postback, one per
// trigger. It is a GET with the mapped fields as a query string by default, a POST when headers
// are mapped (a JSON body with a Content-Type: application/json header). Konnektive signs
// nothing: the secret token in the URL is the only check. Exports run in batches every 15
// minutes, and orders made with a test card are never exported.
//
// Sticky.io's postbacks are built by hand the same way and are read by the same `readPostback`.
import type { CartIntegration, CartRequest, EventType, Receiver, Verdict } from '../notification.js';
import {
  type ConversionRecord,
  contentKey,
  conversionFor,
  epochOfIso8601,
  type FieldSources,
  first,
  isSet,
  type PassThroughName,
  passThrough,
  payloadOf,
  recordFromFields,
  requestFields,
  timesOf,
  UNSIGNED_REPLIES,
  withOurNames,
} from './fields.js';

/** The words a seller may put in a postback's static `event` field, and what each means. */
const EVENT_WORDS: Record<string, EventType> = {
  sale: 'sale',
  new_sale: 'sale',
  new_order: 'sale',
  upsell: 'upsell',
  bump: 'bump',
  rebill: 'rebill',
  recurring: 'rebill',
  refund: 'refund',
  chargeback: 'chargeback',
  cancel: 'cancel',
  test: 'test',
  other: 'other',
};

/** Our event for a postback's `event` word; a word not known is an event of another kind, kept as it came. */
function eventOfWord(word: string): EventType {
  return EVENT_WORDS[word.trim().toLowerCase()] ?? 'other';
}

const MISSING_EVENT = 'event is missing: add a static field event=sale (or upsell, rebill, refund, chargeback, cancel) to the postback';

/**
 * A postback whose parameters the seller mapped by hand (Konnektive, Sticky.io): our field names
 * or the cart's (`cartNames`), and a static `event` naming what happened, as the cart's own
 * trigger is not a field it sends. `fallbacks` are the cart's names for the funnel's values.
 */
export function readPostback(
  request: CartRequest,
  cart: CartIntegration,
  cartNames: FieldSources,
  fallbacks: Partial<Record<PassThroughName, string>> = {},
): Verdict {
  const parsed = requestFields(request);
  if ('problem' in parsed) return { kind: 'invalid', reason: parsed.problem };
  const { fields } = parsed;
  const cartEvent = first(fields, 'event');
  if (cartEvent === undefined) return { kind: 'invalid', reason: MISSING_EVENT };

  const event = eventOfWord(cartEvent);
  const payload = payloadOf(request);
  // The carts send no time of their own that we know of; a seller may map one to created_at.
  const { createdAt, occurredAt } = timesOf(first(fields, 'created_at'), epochOfIso8601, request.receivedAt);
  const record: ConversionRecord = {
    ...recordFromFields(fields, withOurNames(cartNames)),
    created_at: createdAt,
    cart_integration: cart,
    ...passThrough((name) => first(fields, name), { fallbacks }),
  };
  const receipt = typeof record.receipt === 'string' ? record.receipt : undefined;
  const transactionId = first(fields, 'transaction_id', 'transactionId');
  return {
    kind: 'notification',
    notification: {
      eventKey: [receipt ?? contentKey(payload), transactionId, cartEvent].filter((part) => part !== undefined).join('/'),
      event,
      cartEvent,
      receipt: receipt ?? null,
      originalReceipt: typeof record.original_receipt === 'string' ? record.original_receipt : null,
      test: event === 'test' || isSet(first(fields, 'test', 'is_test', 'is_test_cc')),
      occurredAt,
      payload,
      conversion: conversionFor(event, record),
    },
  };
}

/** Konnektive's names for our fields, read after ours: the order record's, and the export names a seller is likely to choose. */
const KONNEKTIVE_NAMES: FieldSources = {
  receipt: ['order_id', 'orderId'],
  amount: ['total', 'totalAmount'],
  tax_amount: ['tax', 'salesTax'],
  shipping_amount: ['shipping'],
  currency: ['currencyCode'],
  email: ['emailAddress'],
  first_name: ['firstName'],
  last_name: ['lastName'],
  zip_code: ['zip', 'postalCode'],
  affiliate: ['aff_id', 'affId'],
  // The affiliate's passed values, as the tracking string names them and as the order stores them.
  tracking_codes: ['sourceValue1', 'sourceValue2', 'sourceValue3', 'sourceValue4', 'sourceValue5', 'c1', 'c2', 'c3', 'click_id', 'subid'],
  payment_method: ['paySource'],
};

export const konnektive: Receiver = {
  name: 'konnektive',
  methods: ['GET', 'POST'],
  needsSecret: false,
  // The funnel's values may also ride in the order's custom fields 1 to 3.
  read: (request) => readPostback(request, 'konnektive', KONNEKTIVE_NAMES, { user_id: 'custom1', page_id: 'custom2', page_version: 'custom3' }),
  ...UNSIGNED_REPLIES,
};
