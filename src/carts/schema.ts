import { Type, type Static } from 'typebox';
import { catalogueFromSchema } from '../filters/catalogue.js';
import { EVENT_TYPES, RECEIVERS, type ReceiverName } from './notification.js';

/** What became of an accepted notification. */
export const EVENT_STATUSES = ['converted', 'recorded', 'test', 'ignored', 'failed'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

const nullableText = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

/** A Digistore24 payment that made a conversion: the example of the OpenAPI document. */
const EXAMPLE = {
  id: 31,
  received_at: '2026-11-22T11:59:51Z',
  occurred_at: '2026-11-22T11:59:48Z',
  cart: 'digistore',
  event: 'sale',
  cart_event: 'on_payment',
  receipt: 'DS-7K2M9Q',
  original_receipt: null,
  test: false,
  status: 'converted',
  problem: null,
  conversion_id: 4087,
  payload: 'event=on_payment&order_id=DS-7K2M9Q&amount=47.00&currency=USD&product_id=81234&address_country=US',
};

// Typed as the receivers' names (TypeBox's Static of a mapped union is never); the schema is the union as it is.
const CartName = Type.Unsafe<ReceiverName>(Type.Union(RECEIVERS.map((name) => Type.Literal(name))));

/** A cart event as the API returns it (docs/api.md, "Cart events"). */
export const CartEventEntry = Type.Object(
  {
    id: Type.Integer(),
    received_at: Type.String({ format: 'date-time', description: 'When the service received it: RFC 3339, UTC, second precision' }),
    occurred_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the cart says it happened, when it says' }),
    cart: CartName,
    event: Type.Union(EVENT_TYPES.map((name) => Type.Literal(name))),
    cart_event: Type.String({ description: "The cart's own name for the event, such as on_payment or RFND" }),
    receipt: nullableText('The purchase it is about: for a refund, chargeback or cancellation, the receipt it reverses'),
    original_receipt: nullableText("For an upsell or rebill, the first order's receipt"),
    test: Type.Boolean({ description: 'A test notification (a test order or the cart’s test button): it makes no conversion' }),
    status: Type.Union(EVENT_STATUSES.map((name) => Type.Literal(name))),
    problem: nullableText('Why a purchase made no conversion (status failed or ignored)'),
    conversion_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The conversion it made, or found already made from the same receipt' }),
    payload: Type.String({ description: 'The notification as received (ClickBank: decrypted), as text' }),
  },
  { additionalProperties: false, $id: 'CartEventEntry', examples: [EXAMPLE] },
);
export type CartEventEntry = Static<typeof CartEventEntry>;

/** A connected cart as the API lists it: the example of the OpenAPI document. */
const RECEIVER_EXAMPLE = { cart: 'digistore', path: '/hooks/digistore/q3Zx8L…', connected_at: '2026-11-02T09:14:05Z' };

/** A cart connected to the account, with the receiver it sends to (docs/api.md, "Cart events"): never its token or secret. */
export const CartReceiverEntry = Type.Object(
  {
    cart: CartName,
    path: Type.String({
      description: "The receiver's URL path, /hooks/{cart}/{token}: only the token's first characters are shown, the rest replaced by …",
    }),
    connected_at: Type.String({ format: 'date-time', description: 'When the cart was connected, or its token last replaced: RFC 3339, UTC, second precision' }),
  },
  { additionalProperties: false, $id: 'CartReceiverEntry', examples: [RECEIVER_EXAMPLE] },
);
export type CartReceiverEntry = Static<typeof CartReceiverEntry>;

/** The filterable columns of cart events: every one but the two of free text, the payload and the problem. */
const CART_EVENT_FILTERS = [
  'id',
  'received_at',
  'occurred_at',
  'cart',
  'event',
  'cart_event',
  'receipt',
  'original_receipt',
  'test',
  'status',
  'conversion_id',
] as const;

export const cartEventCatalogue = catalogueFromSchema(CartEventEntry, CART_EVENT_FILTERS);
