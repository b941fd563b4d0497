import { type Kysely, sql } from 'kysely';
import { wellFormedJson } from '../../conversions/entry-json.js';
import type { Database } from '../database.js';

// Frozen with the migration: every column of conversions but its id, account, time, identity, the
// one a buyer is looked up by, and its entry.
const COLUMNS_IN_THE_ENTRY = [
  'amount',
  'tax_amount',
  'shipping_amount',
  'products',
  'page_id',
  'upsell_step',
  'mobile',
  'tracking_codes',
  'affiliate_payouts',
  'original_receipt',
  'email',
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

/**
 * A conversion's fields are kept once, in its entry: the row keeps only what identifies and
 * dates it, and the value one buyer's conversions are looked up by, with an index.
 * Every field had been stored twice, as a column and in the entry, and writing the columns was
 * most of an import's time in the database; the columnar index now reads the filterable fields
 * from the entry. On SQLite this copies the conversions once, at the first start. Entries
 * holding half a character (a lone surrogate, which JSON.stringify escaped and DuckDB's JSON
 * reader refuses) are written again as the import now writes them.
 */
export function narrowConversionsMigration(database: Pick<Database, 'dropConversionColumns' | 'conversionsSchema'>) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const halves = await db.selectFrom('conversions').select(['id', 'entry_json']).where(sql<boolean>`entry_json like ${'%\\ud%'} escape '!'`).execute();
      for (const { id, entry_json } of halves) {
        await db
          .updateTable('conversions')
          .set({ entry_json: wellFormedJson(entry_json) })
          .where('id', '=', id)
          .execute();
      }
      await database.dropConversionColumns(db, COLUMNS_IN_THE_ENTRY);
      // SQLite names the file on the index, and finds the table in the same file.
      const name = 'conversions_account_user_id';
      const index = database.conversionsSchema ? sql.id(database.conversionsSchema, name) : sql.id(name);
      await sql`create index ${index} on ${sql.id('conversions')} (${sql.id('account_id')}, ${sql.id('user_id')}, ${sql.id('id')})`.execute(db);
    },
  };
}
