import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';

/**
 * Beside each account's conversion version, an id no conversion of the account lies above
 * (ConversionRepository.bumpVersion). A question about an account whose conversions all lie at
 * or below the columnar index's watermark is answered at once, without waiting for the index to
 * catch up with rows of other accounts (a large import into one of them).
 *
 * Every account with conversions gets a row, and each row the largest id of the table: an upper
 * bound, true of every account, which the index reaches with its next catch-up. Finding each
 * account's own largest id would read every conversion.
 */
export function newestConversionIdsMigration(database: Pick<Database, 'conversionsSchema'>) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const schema = database.conversionsSchema ? db.schema.withSchema(database.conversionsSchema) : db.schema;
      await schema
        .alterTable('conversion_versions')
        .addColumn('newest_id', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db
        .insertInto('conversion_versions')
        .columns(['account_id', 'version'])
        .expression(
          db
            .selectFrom('conversions')
            .select(['account_id', sql.lit(0).as('version')])
            .distinct()
            .where('account_id', 'not in', db.selectFrom('conversion_versions').select('account_id')),
        )
        .execute();
      await db
        .updateTable('conversion_versions')
        .set({ newest_id: db.selectFrom('conversions').select(sql`coalesce(max(id), 0)`.as('id')) })
        .execute();
    },
  };
}
