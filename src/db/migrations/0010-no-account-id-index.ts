import type { Kysely } from 'kysely';
import type { Database } from '../database.js';

/**
 * Drops the index of conversions by account and id, which every imported row had to update.
 * Conversions are read by id alone (the primary key; ConversionRepository.entriesByIds says why
 * the account is checked after), by buyer, or by account through the unique index that begins
 * with it; what lists them in id order is the columnar index (docs/performance.md).
 */
export function noAccountIdIndexMigration(database: Pick<Database, 'conversionsSchema'>) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const schema = database.conversionsSchema ? db.schema.withSchema(database.conversionsSchema) : db.schema;
      await schema.dropIndex('conversions_account_id').ifExists().execute();
    },
  };
}
