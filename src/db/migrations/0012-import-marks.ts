import type { Kysely } from 'kysely';
import type { Database } from '../database.js';

/**
 * A mark of each import that committed, written in its own transaction: the columnar index,
 * which takes an import's rows from its advance copy while it runs (advance-copy.ts), knows by
 * the mark that they committed, and by its absence that they did not.
 */
export function importMarksMigration(database: Pick<Database, 'conversionsSchema'>) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const schema = database.conversionsSchema ? db.schema.withSchema(database.conversionsSchema) : db.schema;
      await schema
        .createTable('conversion_imports')
        .addColumn('token', 'text', (c) => c.primaryKey())
        .addColumn('first_id', 'bigint', (c) => c.notNull())
        .addColumn('last_id', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
