import type { CART_INTEGRATIONS } from '../conversions/schema.js';

/**
 * What a cart's server-to-server notification becomes, whichever cart sent it. Each receiver
 * (clickbank.ts, digistore.ts, ...) is a pure function from the request as received to a
 * Verdict: it checks that the notification is genuine and maps it, and touches nothing.
 */

/** The receivers: one per cart, and `generic`, our own signed webhook for any other checkout or a forwarder. */
export const RECEIVERS = ['clickbank', 'digistore', 'svencart', 'buygoods', 'konnektive', 'stickyio', 'generic'] as const;
export type ReceiverName = (typeof RECEIVERS)[number];
export type CartIntegration = (typeof CART_INTEGRATIONS)[number];

/** What happened, in one vocabulary for every cart; `cart_event` keeps the cart's own word. */
export const EVENT_TYPES = ['sale', 'upsell', 'bump', 'rebill', 'refund', 'chargeback', 'cancel', 'test', 'other'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** The events that are purchases: each becomes one conversion (unless it is a test). */
export const PURCHASES: ReadonlySet<EventType> = new Set(['sale', 'upsell', 'bump', 'rebill']);

/** A notification as it arrived: nothing parsed yet but the query string. */
export interface CartRequest {
  method: string;
  /** The query string, a repeated key as an array. */
  query: Record<string, string | string[] | undefined>;
  /** The body's bytes exactly as sent (signatures are over them). */
  rawBody: Buffer;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** When it was received, epoch seconds. */
  receivedAt: number;
}

/** A genuine notification, mapped. */
export interface CartNotification {
  /** Unique per cart for one notification of one event: a repeat (a retry) has the same key. */
  eventKey: string;
  event: EventType;
  /** The cart's own name for the event (`on_payment`, `SALE`, `neworder`, ...). */
  cartEvent: string;
  /**
   * The receipt it is about, when it names one: a purchase's own, or for a refund, chargeback or
   * cancellation the receipt of the purchase it reverses.
   */
  receipt: string | null;
  /** For an upsell or rebill, the first order's receipt (the conversion's `original_receipt`). */
  originalReceipt: string | null;
  test: boolean;
  /** When the cart says it happened, epoch seconds; undefined when it does not say. */
  occurredAt: number | undefined;
  /** The notification's content as text: the body (decrypted, for ClickBank), or the query string of a GET. */
  payload: string;
  /**
   * For a purchase, the conversion as `conversions import` takes it (every field the
   * notification carries, `created_at` as RFC 3339 UTC, `cart_integration` set); undefined for
   * other events. It is checked by the import's own rules before it is stored.
   */
  conversion: Record<string, unknown> | undefined;
  /**
   * Why a genuine notification is kept without a conversion although it is a purchase: a field
   * that could not be read, or a copy that is not the seller's (a ClickBank affiliate's).
   */
  ignored?: string;
}

/**
 * What a receiver makes of a request:
 * - `refused`: not genuine (a bad signature, an undecryptable body): nothing is stored;
 * - `invalid`: genuine enough to say what is wrong but unusable (no event type): a 400, nothing stored;
 * - `acknowledged`: genuine, and nothing to keep (a connection test);
 * - `notification`: genuine; it is stored.
 */
export type Verdict =
  | { kind: 'refused'; reason: string }
  | { kind: 'invalid'; reason: string }
  | { kind: 'acknowledged'; reason: string }
  | { kind: 'notification'; notification: CartNotification };

/** An HTTP answer a cart expects. */
export interface CartReply {
  status: number;
  contentType: string;
  body: string;
}

/** One receiver: how it reads a request and what it answers. */
export interface Receiver {
  name: ReceiverName;
  methods: readonly ('GET' | 'POST' | 'PUT')[];
  /** Whether connecting it needs the cart's own secret (ClickBank's secret key, the IPN passphrase, the webhook secret). */
  needsSecret: boolean;
  /** Checks and maps a request; `secret` is the one given when the cart was connected. */
  read(request: CartRequest, secret: string | null): Verdict;
  /** The answer to a notification accepted (stored now, or a repeat of one stored before). */
  accepted(duplicate: boolean): CartReply;
  /** The answer to one refused as not genuine; absent for carts that sign nothing, whose only check (the URL token) is the service's. */
  refused?(reason: string): CartReply;
}
