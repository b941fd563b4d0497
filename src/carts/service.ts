import { createHash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Database } from '../db/database.js';
import { ConversionRepository, type NewConversion } from '../conversions/repository.js';
import { validateConversion } from '../conversions/validate.js';
import type { PreparedList } from '../filters/list.js';
import { ListCache, listETag } from '../filters/list-cache.js';
import { parseListQuery, type RawQuery } from '../filters/parse.js';
import { formatTimestamp } from '../filters/timestamps.js';
import { type CartEventRow, CartRepository, type NewCartEvent, type ReceiverRow } from './repository.js';
import { type CartEventEntry, cartEventCatalogue, type CartReceiverEntry, type EventStatus } from './schema.js';
import { type CartNotification, type CartReply, type CartRequest, PURCHASES, RECEIVERS, type ReceiverName } from './notification.js';
import { textReply } from './receivers/fields.js';
import { RECEIVER_BY_NAME } from './receivers/index.js';

/** How a notification fared, for the metrics and the log. */
export type Outcome = 'stored' | 'duplicate' | 'acknowledged' | 'invalid' | 'refused' | 'unknown_token';

/** What became of a notification written: kept, a repeat of one kept before, or sent to a token disconnected meanwhile. */
type StoreResult = 'stored' | 'repeat' | 'disconnected';

/** A notification checked and mapped, waiting to be written. */
interface PendingStore {
  event: NewCartEvent;
  row: NewConversion | undefined;
  /** The token it came with: it is kept only if the token is still connected when it is written. */
  tokenHash: string;
  resolve: (result: StoreResult) => void;
  reject: (error: unknown) => void;
}

// The characters of a token shown in listings: enough to tell two apart, far too few to guess the rest.
const SHOWN_TOKEN_CHARACTERS = 6;
// The most notifications one transaction writes.
const MAX_BATCH = 200;
// The most receivers kept in memory by the hash of their token.
const KNOWN_RECEIVERS = 1_000;
const NOT_FOUND = textReply(404, 'Not Found');

export function isReceiverName(name: string): name is ReceiverName {
  return (RECEIVERS as readonly string[]).includes(name);
}

/** The URL path a cart is given: the receiver's name and the token, which is the whole of its secret for unsigned carts. */
export function receiverPath(cart: ReceiverName, token: string): string {
  return `/hooks/${cart}/${token}`;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Connected carts and what they send: each notification is checked by its cart's receiver
 * (receivers/), kept as a cart event, and, when it is a purchase, made a conversion in the same
 * transaction, through the import's own checks and its identity of a conversion (account, cart,
 * receipt). The reply goes out only after the commit, so nothing acknowledged is lost.
 */
export class CartService {
  private readonly carts: CartRepository;
  private readonly lists = new ListCache();
  /**
   * Receivers by the hash of their token, as last read: a notification then costs no read of its
   * own before its transaction, which checks that the token is still connected (a cart
   * disconnected or connected again elsewhere, by the command line, changes the table only).
   */
  private readonly knownReceivers = new LRUCache<string, ReceiverRow>({ max: KNOWN_RECEIVERS });
  /** Notifications waiting for the next transaction (writeWaiting). */
  private readonly waiting: PendingStore[] = [];
  private writing = false;

  constructor(private readonly database: Database) {
    this.carts = new CartRepository(database.db);
  }

  /** Connects `cart` to the account, replacing any earlier token; returns the new URL path, the only time the token is shown. */
  async connect(accountId: number, cart: ReceiverName, secret: string | undefined): Promise<string> {
    const receiver = RECEIVER_BY_NAME[cart];
    if (receiver.needsSecret && !secret) throw new Error(`${cart} signs its notifications: give its secret with --secret (see docs/carts.md)`);
    if (!receiver.needsSecret && secret) throw new Error(`${cart} signs nothing, so it has no secret: its URL token is the check; leave --secret out`);
    const token = randomBytes(32).toString('base64url');
    await this.carts.connect({
      account_id: accountId,
      cart,
      token_hash: hashToken(token),
      token_prefix: token.slice(0, SHOWN_TOKEN_CHARACTERS),
      secret: secret ?? null,
      created_at: Math.floor(Date.now() / 1000),
    });
    return receiverPath(cart, token);
  }

  /**
   * The account's connected carts, by cart, as the API (GET /api/v1/cart-receivers) and `carts
   * list` show them: never a token or a secret, only the token's first characters.
   */
  async receivers(accountId: number): Promise<CartReceiverEntry[]> {
    return (await this.carts.receivers(accountId)).map((row) => ({
      cart: row.cart as ReceiverName,
      path: receiverPath(row.cart as ReceiverName, `${row.token_prefix}…`),
      connected_at: formatTimestamp(row.created_at),
    }));
  }

  disconnect(accountId: number, cart: ReceiverName): Promise<boolean> {
    return this.carts.disconnect(accountId, cart);
  }

  /**
   * Receives one notification sent to `/hooks/{cart}/{token}`: answers what the cart expects,
   * and says how it fared. An unknown cart or token gets a 404, which tells a prober nothing.
   */
  async receive(cart: string, token: string, request: CartRequest): Promise<{ reply: CartReply; outcome: Outcome; reason?: string }> {
    if (!isReceiverName(cart)) return { reply: NOT_FOUND, outcome: 'unknown_token' };
    const tokenHash = hashToken(token);
    const known = this.knownReceivers.get(tokenHash);
    const found = known ?? (await this.readReceiver(tokenHash));
    if (!found || found.cart !== cart) return { reply: NOT_FOUND, outcome: 'unknown_token' };
    const answered = await this.answer(cart, found, tokenHash, request);
    // A notification's transaction checked the token; any other answer with a token known from
    // before stands only once the token is found connected still.
    const checked = answered.outcome === 'stored' || answered.outcome === 'duplicate' || answered.outcome === 'unknown_token';
    if (known && !checked && !(await this.readReceiver(tokenHash))) return { reply: NOT_FOUND, outcome: 'unknown_token' };
    return answered;
  }

  /** The receiver with this token's hash, read afresh and remembered, or undefined (and forgotten) when there is none. */
  private async readReceiver(tokenHash: string): Promise<ReceiverRow | undefined> {
    const found = await this.carts.findByTokenHash(tokenHash);
    if (found) this.knownReceivers.set(tokenHash, found);
    else this.knownReceivers.delete(tokenHash);
    return found;
  }

  /** What the receiver of `cart` answers a notification, once found by its token. */
  private async answer(
    cart: ReceiverName,
    found: ReceiverRow,
    tokenHash: string,
    request: CartRequest,
  ): Promise<{ reply: CartReply; outcome: Outcome; reason?: string }> {
    const receiver = RECEIVER_BY_NAME[cart];
    if (!receiver.methods.includes(request.method as 'GET')) {
      const reason = `${cart} notifications come by ${receiver.methods.join(' or ')}`;
      return { reply: textReply(405, reason), outcome: 'invalid', reason };
    }

    const verdict = receiver.read(request, found.secret);
    switch (verdict.kind) {
      case 'refused':
        return { reply: receiver.refused?.(verdict.reason) ?? NOT_FOUND, outcome: 'refused', reason: verdict.reason };
      case 'invalid':
        return { reply: textReply(400, verdict.reason), outcome: 'invalid', reason: verdict.reason };
      case 'acknowledged':
        return { reply: receiver.accepted(false), outcome: 'acknowledged', reason: verdict.reason };
      case 'notification': {
        const tooLong = longIdentity(verdict.notification);
        if (tooLong) return { reply: textReply(400, tooLong), outcome: 'invalid', reason: tooLong };
        const result = await this.store(found.account_id, cart, tokenHash, verdict.notification, request.receivedAt);
        if (result === 'disconnected') {
          this.knownReceivers.delete(tokenHash);
          return { reply: NOT_FOUND, outcome: 'unknown_token' };
        }
        return { reply: receiver.accepted(result === 'repeat'), outcome: result === 'stored' ? 'stored' : 'duplicate' };
      }
    }
  }

  /**
   * Keeps the event and makes its conversion; resolves once they are committed. Nothing changes
   * for an event kept before (a repeat), nor for a token no longer connected.
   */
  private store(accountId: number, cart: ReceiverName, tokenHash: string, notification: CartNotification, receivedAt: number): Promise<StoreResult> {
    const { status, problem, row } = this.outcomeOf(notification);
    const event = withoutNul({
      account_id: accountId,
      received_at: receivedAt,
      occurred_at: notification.occurredAt ?? null,
      cart,
      event_key: notification.eventKey,
      event: notification.event,
      cart_event: notification.cartEvent,
      receipt: notification.receipt,
      original_receipt: notification.originalReceipt,
      test: notification.test ? 1 : 0,
      status,
      problem,
      conversion_id: null,
      payload: notification.payload,
    });
    return new Promise((resolve, reject) => {
      this.waiting.push({ event, row, tokenHash, resolve, reject });
      void this.writeWaiting();
    });
  }

  /**
   * Group commit: the notifications that arrive while a transaction runs are written together in
   * the next one, so that one commit (one flush to disk) and one version bump serve many, and the
   * database's one writer keeps up with a busy shop's carts. A batch that fails is written again
   * one notification at a time, so that one that cannot be stored fails alone; unless the database
   * was busy or too slow, which would fail each again after as long a wait.
   */
  private async writeWaiting(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        try {
          const results = await this.writeInOneTransaction(batch);
          for (const [index, pending] of batch.entries()) pending.resolve(results[index]!);
        } catch (error) {
          // A busy or slow database fails each alone as it failed them together: all are told so, at once.
          if (batch.length === 1 || this.database.isBusy(error) || this.database.isStatementTimeout(error)) for (const pending of batch) pending.reject(error);
          else
            for (const pending of batch) {
              await this.writeInOneTransaction([pending]).then(([result]) => pending.resolve(result!), pending.reject);
            }
        }
      }
    } finally {
      this.writing = false;
    }
  }

  /**
   * Each event whose token is connected still, unless its key was kept before or comes earlier
   * in the batch, with the conversion it makes; says what became of each. A few statements for
   * the whole batch, whatever its size: each is a round trip to the database.
   */
  private writeInOneTransaction(batch: PendingStore[]): Promise<StoreResult[]> {
    return this.database.db.transaction().execute(async (trx) => {
      // Ids become visible in ascending order: the columnar index catches up by id.
      await this.database.serializeConversionWrites(trx);
      const carts = new CartRepository(trx);
      const conversions = new ConversionRepository(trx, this.database);
      const keyOf = ({ account_id, cart, event_key }: Pick<NewCartEvent, 'account_id' | 'cart' | 'event_key'>) => `${account_id}\n${cart}\n${event_key}`;
      const connected = new Set(await carts.connectedTokenHashes([...new Set(batch.map(({ tokenHash }) => tokenHash))]));
      const toConnected = batch.filter(({ tokenHash }) => connected.has(tokenHash));
      const seen = new Set((await carts.keptEventKeys(toConnected.map(({ event }) => event))).map(keyOf));
      const fresh: PendingStore[] = [];
      for (const pending of toConnected) {
        const key = keyOf(pending.event);
        if (seen.has(key)) continue;
        seen.add(key);
        fresh.push(pending);
      }
      const converting = fresh.filter(({ row }) => row);
      const ids = await conversions.insertEach(converting.map(({ event, row }) => ({ ...row!, account_id: event.account_id })));
      const conversionIdOf = new Map(converting.map((pending, index) => [pending, ids[index]!]));
      await carts.insertEvents(fresh.map((pending) => ({ ...pending.event, conversion_id: conversionIdOf.get(pending) ?? null })));
      // Lists of conversions and of cart events are stale from this commit on.
      for (const accountId of new Set(fresh.map(({ event }) => event.account_id))) await conversions.bumpVersion(accountId);
      const stored = new Set(fresh);
      return batch.map((pending): StoreResult => (stored.has(pending) ? 'stored' : connected.has(pending.tokenHash) ? 'repeat' : 'disconnected'));
    });
  }

  /** What a notification becomes: a conversion only for a purchase that is no test, whose fields pass the import's checks. */
  private outcomeOf(notification: CartNotification): { status: EventStatus; problem: string | null; row: NewConversion | undefined } {
    if (!PURCHASES.has(notification.event)) return { status: notification.test ? 'test' : 'recorded', problem: null, row: undefined };
    if (notification.ignored) return { status: 'ignored', problem: notification.ignored, row: undefined };
    const checked = validateConversion(notification.conversion ?? {});
    if ('problems' in checked) return { status: 'failed', problem: checked.problems.join('; '), row: undefined };
    return notification.test ? { status: 'test', problem: null, row: undefined } : { status: 'converted', problem: null, row: checked.row };
  }

  /** One page of the account's cart events matching the query string's filters, newest last, as JSON text. */
  events(accountId: number, dataVersion: number, query: RawQuery): PreparedList {
    const listQuery = parseListQuery(query, cartEventCatalogue);
    return {
      etag: listETag('cart-events', accountId, dataVersion, listQuery),
      read: async () => {
        const page = await this.carts.listEvents({ accountId, query: listQuery, facts: this.lists.lookup('cart-events', accountId, dataVersion, listQuery) });
        const { entries, ...counts } = page;
        return { ...counts, entriesJson: entries.map((row) => JSON.stringify(toEntry(row))).join(',') };
      },
    };
  }
}

// The longest event key and receipt kept, in bytes of UTF-8: both are in indexes, whose entries
// PostgreSQL limits to 2,704 bytes; the import's receipts are as long at most.
const MAX_IDENTITY_BYTES = 2048;

/** Why a notification's key or receipt is too long to keep, if it is. */
function longIdentity({ eventKey, receipt }: CartNotification): string | undefined {
  const named = { 'the event id': eventKey, receipt };
  for (const [name, value] of Object.entries(named)) {
    // Measured as kept: each NUL as U+FFFD, three bytes.
    if (value && Buffer.byteLength(keptText(value)) > MAX_IDENTITY_BYTES) return `${name} is longer than ${MAX_IDENTITY_BYTES} bytes`;
  }
  return undefined;
}

/**
 * Text as a cart event keeps it: each NUL character (U+0000) replaced by U+FFFD. PostgreSQL's text
 * cannot hold it, and a genuine notification is kept, not refused, so that its cart does not send
 * it again and again. Its conversion is not made of it: the import's checks refuse the NUL there,
 * and the event's problem says so.
 */
const keptText = (text: string) => text.replaceAll('\u0000', '\uFFFD');

/** A cart event's row with its text as kept (keptText); migrate-data copies older rows so too. */
export function withoutNul<T extends Record<string, unknown>>(event: T): T {
  return Object.fromEntries(Object.entries(event).map(([name, value]) => [name, typeof value === 'string' ? keptText(value) : value])) as T;
}

// The entry's fields with their types; the unions of literals are plain text here (TypeBox's Static of a mapped union is never).
type CartEventJson = Omit<CartEventEntry, 'cart' | 'event' | 'status'> & { cart: string; event: string; status: string };

function toEntry(row: CartEventRow): CartEventJson {
  return {
    id: Number(row.id),
    received_at: formatTimestamp(Number(row.received_at)),
    occurred_at: row.occurred_at === null ? null : formatTimestamp(Number(row.occurred_at)),
    cart: row.cart,
    event: row.event,
    cart_event: row.cart_event,
    receipt: row.receipt,
    original_receipt: row.original_receipt,
    test: Number(row.test) === 1,
    status: row.status,
    problem: row.problem,
    conversion_id: row.conversion_id === null ? null : Number(row.conversion_id),
    payload: row.payload,
  };
}
