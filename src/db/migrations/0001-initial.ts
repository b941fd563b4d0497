import type { CreateTableBuilder, Kysely } from 'kysely';
import type { ColumnTypes } from '../database.js';

// Migrations are frozen history: they name their columns here instead of importing the
// resource catalogues, which may change later.

const CONVERSION_TEXT_COLUMNS = [
  'cart_integration',
  'receipt',
  'original_receipt',
  'email',
  'user_id',
  'page_version',
  'upsell_flow_id',
  'upsell_session',
  'upsell_path',
  'upsell_group',
  'country',
  'affiliate',
  'vendor',
  'role',
  'referrer',
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

/** The filterable columns of conversions, each given an index that leads with the account and ends with id. */
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

export function initialMigration(types: ColumnTypes) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('accounts')
        .addColumn('id', types.autoIdType, types.autoId)
        .addColumn('name', types.text, (c) => c.notNull().unique())
        .addColumn('handle', types.text, (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', types.autoIdType, types.autoId)
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('prefix', types.text, (c) => c.notNull())
        .addColumn('key_hash', types.text, (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_prefix').on('api_keys').column('prefix').execute();

      let conversions: CreateTableBuilder<'conversions', string> = db.schema
        .createTable('conversions')
        .addColumn('id', types.autoIdType, types.autoId)
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('amount', 'double precision')
        .addColumn('tax_amount', 'double precision')
        .addColumn('shipping_amount', 'double precision')
        .addColumn('products', 'text', (c) => c.notNull())
        .addColumn('page_id', 'bigint')
        .addColumn('upsell_step', 'double precision')
        .addColumn('mobile', 'integer')
        .addColumn('tracking_codes', 'text', (c) => c.notNull())
        .addColumn('affiliate_payouts', 'text', (c) => c.notNull());
      for (const column of CONVERSION_TEXT_COLUMNS) {
        const required = column === 'cart_integration' || column === 'receipt';
        conversions = conversions.addColumn(column, types.text, (c) => (required ? c.notNull() : c));
      }
      await conversions.addUniqueConstraint('conversions_account_cart_receipt', ['account_id', 'cart_integration', 'receipt']).execute();

      await db.schema.createIndex('conversions_account_id').on('conversions').columns(['account_id', 'id']).execute();
      for (const column of CONVERSION_INDEXED_COLUMNS) {
        await db.schema.createIndex(`conversions_account_${column}`).on('conversions').columns(['account_id', column, 'id']).execute();
      }

      await db.schema
        .createTable('conversion_tracking_codes')
        .addColumn('conversion_id', 'bigint', (c) => c.notNull().references('conversions.id').onDelete('cascade'))
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('code', types.text, (c) => c.notNull())
        .addPrimaryKeyConstraint('conversion_tracking_codes_pk', ['conversion_id', 'code'])
        .execute();
      await db.schema
        .createIndex('conversion_tracking_codes_account_code')
        .on('conversion_tracking_codes')
        .columns(['account_id', 'code', 'conversion_id'])
        .execute();
    },
  };
}
