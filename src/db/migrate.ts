import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './database.js';
import { initialMigration } from './migrations/0001-initial.js';
import { assetsMigration } from './migrations/0002-assets.js';
import { dataVersionMigration } from './migrations/0003-data-version.js';

/** Ordered by name; a new migration is added here with the next number. */
function migrations(database: Database): Record<string, Migration> {
  return {
    '0001-initial': initialMigration(database.columnTypes),
    '0002-assets': assetsMigration(database.columnTypes),
    '0003-data-version': dataVersionMigration(),
  };
}

/** Brings the schema up to date; safe to run at every start and from several instances. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(database) };
  const migrator = new Migrator({ db: database.db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
