import type { Kysely } from 'kysely';
import type { Database } from '../database.js';

/**
 * Conversions get a file of their own on SQLite, so that an import, which holds its file's one
 * writer to its commit, no longer blocks asset and key writes for its whole length (they waited
 * 5 s and failed). The version an import increments moves beside the conversions for the same
 * reason. On a large database the move copies every conversion once, at the first start.
 */
export function conversionsFileMigration(database: Pick<Database, 'separateConversions' | 'conversionsSchema'>) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await database.separateConversions(db);
      const schema = database.conversionsSchema ? db.schema.withSchema(database.conversionsSchema) : db.schema;
      await schema
        .createTable('conversion_versions')
        .ifNotExists()
        .addColumn('account_id', 'bigint', (c) => c.primaryKey())
        .addColumn('version', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
