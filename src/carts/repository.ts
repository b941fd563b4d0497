import type { Insertable, Kysely, Selectable } from 'kysely';
import type { CartEventsTable, CartReceiversTable, DatabaseSchema } from '../db/schema.js';
import { type AccountList, type ListPage, listRows } from '../filters/list.js';

export type ReceiverRow = Selectable<CartReceiversTable>;
export type CartEventRow = Selectable<CartEventsTable>;
export type NewCartEvent = Omit<Insertable<CartEventsTable>, 'id'>;

/** All SQL about connected carts and the events they sent. */
export class CartRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

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

  /** Keeps an event; undefined when the account has one with the same receiver and key already (a repeat). */
  async insertEvent(row: NewCartEvent): Promise<number | undefined> {
    const inserted = await this.db
      .insertInto('cart_events')
      .values(row)
      .onConflict((oc) => oc.columns(['account_id', 'cart', 'event_key']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted ? Number(inserted.id) : undefined;
  }

  async setConversion(eventId: number, conversionId: number): Promise<void> {
    await this.db.updateTable('cart_events').set({ conversion_id: conversionId }).where('id', '=', eventId).execute();
  }

  listEvents(list: AccountList): Promise<ListPage<CartEventRow>> {
    return listRows<CartEventRow>({ ...list, db: this.db, table: 'cart_events' });
  }
}
