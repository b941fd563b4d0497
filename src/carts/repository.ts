import type { Insertable, Kysely, Selectable } from 'kysely';
import { CompiledOnce, insertParameters } from '../db/compiled-once.js';
import type { CartEventsTable, CartReceiversTable, DatabaseSchema } from '../db/schema.js';
import { type AccountList, type ListPage, listRows } from '../filters/list.js';

export type ReceiverRow = Selectable<CartReceiversTable>;
export type CartEventRow = Selectable<CartEventsTable>;
export type NewCartEvent = Omit<Insertable<CartEventsTable>, 'id'>;

/** All SQL about connected carts and the events they sent. */
export class CartRepository {
  /** The statements of a group of notifications' transaction, built once per group size: one is written every few milliseconds. */
  private readonly compiled: CompiledOnce;

  constructor(private readonly db: Kysely<DatabaseSchema>) {
    this.compiled = new CompiledOnce(db, 'carts');
  }

  /** Connects a cart to an account, or replaces its token and secret when it is connected already. */
  async connect(row: Omit<ReceiverRow, 'id'>): Promise<void> {
    await this.db
      .insertInto('cart_receivers')
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'cart'])
          .doUpdateSet({ token_hash: row.token_hash, token_prefix: row.token_prefix, secret: row.secret, created_at: row.created_at }),
      )
      .execute();
  }

  receivers(accountId: number): Promise<Pick<ReceiverRow, 'cart' | 'token_prefix' | 'created_at'>[]> {
    return this.db.selectFrom('cart_receivers').select(['cart', 'token_prefix', 'created_at']).where('account_id', '=', accountId).orderBy('cart').execute();
  }

  async disconnect(accountId: number, cart: string): Promise<boolean> {
    const result = await this.db.deleteFrom('cart_receivers').where('account_id', '=', accountId).where('cart', '=', cart).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  findByTokenHash(tokenHash: string): Promise<ReceiverRow | undefined> {
    return this.db.selectFrom('cart_receivers').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  /** Which of these token hashes belong to a connected receiver still. */
  async connectedTokenHashes(tokenHashes: string[]): Promise<string[]> {
    if (tokenHashes.length === 0) return [];
    const query = () => this.db.selectFrom('cart_receivers').select('token_hash').where('token_hash', 'in', tokenHashes);
    const { rows } = await this.compiled.execute(`connected of ${tokenHashes.length}`, query, tokenHashes);
    return rows.map((row) => row.token_hash);
  }

  /** Which of these (account, cart, event key) the events kept already have. */
  async keptEventKeys(keys: Pick<NewCartEvent, 'account_id' | 'cart' | 'event_key'>[]): Promise<Pick<CartEventRow, 'account_id' | 'cart' | 'event_key'>[]> {
    if (keys.length === 0) return [];
    const query = () =>
      this.db
        .selectFrom('cart_events')
        .select(['account_id', 'cart', 'event_key'])
        .where((eb) =>
          eb(
            eb.refTuple('account_id', 'cart', 'event_key'),
            'in',
            keys.map((key) => eb.tuple(key.account_id, key.cart, key.event_key)),
          ),
        );
    const parameters = keys.flatMap((key) => [key.account_id, key.cart, key.event_key]);
    return (await this.compiled.execute(`kept of ${keys.length}`, query, parameters)).rows;
  }

  /** Keeps events; one whose account, cart and key an event kept already has is left out (a repeat). Every event has the first one's fields. */
  async insertEvents(rows: NewCartEvent[]): Promise<void> {
    if (rows.length === 0) return;
    const { columns, parameters } = insertParameters(rows);
    const template = Object.fromEntries(columns.map((column) => [column, null])) as unknown as NewCartEvent;
    const query = () =>
      this.db
        .insertInto('cart_events')
        .values(rows.map(() => template))
        .onConflict((oc) => oc.columns(['account_id', 'cart', 'event_key']).doNothing());
    await this.compiled.execute(`insert ${rows.length}:${columns.join(',')}`, query, parameters);
  }

  listEvents(list: AccountList): Promise<ListPage<CartEventRow>> {
    return listRows<CartEventRow>({ ...list, db: this.db, table: 'cart_events' });
  }
}
