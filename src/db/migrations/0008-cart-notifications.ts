import type { Kysely } from 'kysely';
import type { ColumnTypes, Database } from '../database.js';

/**
 * Carts tell the service about sales as they happen. A receiver (`cart_receivers`, beside the
 * accounts) is one cart connected to one account: its URL token, kept only as a hash, and the
 * cart's own secret where it signs. Every accepted notification is kept (`cart_events`) beside
 * the conversions (on SQLite in their file), so that an event and the conversion it makes
 * commit together, and a repeat of either is refused by the same unique keys.
 */
export function cartNotificationsMigration(database: Pick<Database, 'conversionsSchema' | 'columnTypes'>) {
  const types: ColumnTypes = database.columnTypes;
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('cart_receivers')
        .addColumn('id', types.autoIdType, types.autoId)
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('cart', types.text, (c) => c.notNull())
        .addColumn('token_hash', types.text, (c) => c.notNull().unique())
        .addColumn('token_prefix', types.text, (c) => c.notNull())
        .addColumn('secret', types.text)
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('cart_receivers_account_cart', ['account_id', 'cart'])
        .execute();

      const schema = database.conversionsSchema ? db.schema.withSchema(database.conversionsSchema) : db.schema;
      await schema
        .createTable('cart_events')
        .addColumn('id', types.autoIdType, types.autoId)
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .addColumn('occurred_at', 'bigint')
        .addColumn('cart', types.text, (c) => c.notNull())
        .addColumn('event_key', types.text, (c) => c.notNull())
        .addColumn('event', types.text, (c) => c.notNull())
        .addColumn('cart_event', types.text, (c) => c.notNull())
        .addColumn('receipt', types.text)
        .addColumn('original_receipt', types.text)
        .addColumn('test', 'integer', (c) => c.notNull())
        .addColumn('status', types.text, (c) => c.notNull())
        .addColumn('problem', types.text)
        .addColumn('conversion_id', 'bigint')
        .addColumn('payload', types.text, (c) => c.notNull())
        .addUniqueConstraint('cart_events_account_cart_key', ['account_id', 'cart', 'event_key'])
        // The indexes of an account's events in id order, and of its events by receipt: as
        // constraints (unique anyway, the id being in each), since SQLite's CREATE INDEX in an
        // attached file takes the file's name on the index but not on the table.
        .addUniqueConstraint('cart_events_account_id', ['account_id', 'id'])
        .addUniqueConstraint('cart_events_account_receipt', ['account_id', 'receipt', 'id'])
        .execute();
    },
  };
}
