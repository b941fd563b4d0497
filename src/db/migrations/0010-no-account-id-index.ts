import type { Kysely } from 'kysely';
import type { Database } from '../database.js';

/**
 * Drops the index of conversions by account and id. Every statement finds a conversion by its id
 * (the primary key) or by its buyer, and an account's conversions by the unique index that begins
 * with the account; what lists them in id order is the columnar index. Keeping this one up cost
 * an import of 1,000,000 conversions about half a second (docs/performance.md).
 */
export function noAccountIdIndexMigration(database: Pick<Database, 'conversionsSchema'>) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const schema = database.conversionsSchema ? db.schema.withSchema(database.conversionsSchema) : db.schema;
      await schema.dropIndex('conversions_account_id').ifExists().execute();
    },
  };
}
