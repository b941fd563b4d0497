import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../database.js';

// Frozen with the migration: the conversions' column indexes of 0001 and 0005.
const CONVERSION_INDEXED_COLUMNS = [
  'created_at',
  'cart_integration',
  'receipt',
  'original_receipt',
  'amount',
  'tax_amount',
  'shipping_amount',
  'user_id',
  'page_id',
  'page_version',
  'upsell_path',
  'upsell_step',
  'country',
  'mobile',
  'affiliate',
  'vendor',
  'referrer_name',
  'referrer_medium',
  'joint_venture_order',
  'currency',
  'hostname',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'first_name',
  'last_name',
  'zip_code',
  'payment_method',
];

/**
 * Questions about conversions are answered by a columnar index (src/db/columnar), derived from
 * the conversions table and caught up from it by id. What only filters needed goes: the index of
 * every filterable column (an import updated 30 of them for every row) and the table of tracking
 * codes (the row keeps them as JSON, which the index reads). The identity made here tells the
 * index which database it was made from, so that a restored or replaced one is indexed afresh.
 */
export function columnarIndexMigration(database: Pick<Database, 'conversionsSchema'>) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const schema = database.conversionsSchema ? db.schema.withSchema(database.conversionsSchema) : db.schema;
      for (const column of CONVERSION_INDEXED_COLUMNS) await schema.dropIndex(`conversions_account_${column}`).ifExists().execute();
      await schema.dropTable('conversion_tracking_codes').ifExists().execute();
      await schema
        .createTable('conversions_identity')
        .addColumn('identity', 'text', (c) => c.notNull())
        .execute();
      const table = database.conversionsSchema ? `${database.conversionsSchema}.conversions_identity` : 'conversions_identity';
      await db.insertInto(table).values({ identity: randomUUID() }).execute();
    },
  };
}
