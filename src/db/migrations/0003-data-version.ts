import type { Kysely } from 'kysely';

/**
 * A per-account write version: every transaction that changes an account's conversions or
 * assets increments it, so that counts and page boundaries cached for a list stay exact and
 * list responses can carry an ETag (issue 5).
 */
export function dataVersionMigration() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('accounts').addColumn('data_version', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    },
  };
}
