import type { Kysely } from 'kysely';
import type { Database, JsonField } from '../database.js';

// Frozen with the migration: conversion entry fields as the API wrote them when it was made, without the id.
const CONVERSION_ENTRY_FIELDS: JsonField[] = [
  { name: 'created_at', kind: 'timestamp' },
  { name: 'cart_integration', kind: 'plain' },
  { name: 'receipt', kind: 'plain' },
  { name: 'original_receipt', kind: 'plain' },
  { name: 'amount', kind: 'number' },
  { name: 'tax_amount', kind: 'number' },
  { name: 'shipping_amount', kind: 'number' },
  { name: 'products', kind: 'json' },
  { name: 'email', kind: 'plain' },
  { name: 'user_id', kind: 'plain' },
  { name: 'page_id', kind: 'plain' },
  { name: 'page_version', kind: 'plain' },
  { name: 'upsell_flow_id', kind: 'plain' },
  { name: 'upsell_session', kind: 'plain' },
  { name: 'upsell_path', kind: 'plain' },
  { name: 'upsell_group', kind: 'plain' },
  { name: 'upsell_step', kind: 'number' },
  { name: 'country', kind: 'plain' },
  { name: 'mobile', kind: 'boolean' },
  { name: 'affiliate', kind: 'plain' },
  { name: 'vendor', kind: 'plain' },
  { name: 'role', kind: 'plain' },
  { name: 'tracking_codes', kind: 'json' },
  { name: 'referrer', kind: 'plain' },
  { name: 'referrer_name', kind: 'plain' },
  { name: 'referrer_medium', kind: 'plain' },
  { name: 'joint_venture_order', kind: 'plain' },
  { name: 'currency', kind: 'plain' },
  { name: 'hostname', kind: 'plain' },
  { name: 'utm_source', kind: 'plain' },
  { name: 'utm_medium', kind: 'plain' },
  { name: 'utm_campaign', kind: 'plain' },
  { name: 'utm_content', kind: 'plain' },
  { name: 'first_name', kind: 'plain' },
  { name: 'last_name', kind: 'plain' },
  { name: 'zip_code', kind: 'plain' },
  { name: 'payment_method', kind: 'plain' },
  { name: 'affiliate_payouts', kind: 'json' },
];

/**
 * What makes lists fast on large accounts (docs/performance.md):
 * - accounts.data_version, incremented by every transaction that changes the account's
 *   conversions or assets, so that counts and page boundaries cached per filter stay exact;
 * - conversions.entry_json, each conversion as the API writes it (but for its id), written once
 *   on import, so that a page is read rather than built field by field. Rows imported before
 *   are filled in here by the database itself.
 */
export function listSpeedMigration(database: Pick<Database, 'jsonObject'>) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('accounts')
        .addColumn('data_version', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('conversions').addColumn('entry_json', 'text').execute();
      await db
        .updateTable('conversions')
        .set({ entry_json: database.jsonObject('conversions', CONVERSION_ENTRY_FIELDS) })
        .execute();
    },
  };
}
