import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './database.js';
import { initialMigration } from './migrations/0001-initial.js';
import { assetsMigration } from './migrations/0002-assets.js';
import { listSpeedMigration } from './migrations/0003-list-speed.js';
import { assetEntriesMigration } from './migrations/0004-asset-entries.js';
import { datedIndexesMigration } from './migrations/0005-dated-indexes.js';
import { conversionsFileMigration } from './migrations/0006-conversions-file.js';
import { columnarIndexMigration } from './migrations/0007-columnar-index.js';
import { cartNotificationsMigration } from './migrations/0008-cart-notifications.js';
import { narrowConversionsMigration } from './migrations/0009-narrow-conversions.js';
import { noAccountIdIndexMigration } from './migrations/0010-no-account-id-index.js';
import { newestConversionIdsMigration } from './migrations/0011-newest-conversion-ids.js';
import { importMarksMigration } from './migrations/0012-import-marks.js';

/** Ordered by name; a new migration is added here with the next number. */
function migrations(database: Database): Record<string, Migration> {
  return {
    '0001-initial': initialMigration(database.columnTypes),
    '0002-assets': assetsMigration(database.columnTypes),
    '0003-list-speed': listSpeedMigration(database),
    '0004-asset-entries': assetEntriesMigration(database),
    '0005-dated-indexes': datedIndexesMigration(),
    '0006-conversions-file': conversionsFileMigration(database),
    '0007-columnar-index': columnarIndexMigration(database),
    '0008-cart-notifications': cartNotificationsMigration(database),
    '0009-narrow-conversions': narrowConversionsMigration(database),
    '0010-no-account-id-index': noAccountIdIndexMigration(database),
    '0011-newest-conversion-ids': newestConversionIdsMigration(database),
    '0012-import-marks': importMarksMigration(database),
  };
}

/**
 * Brings the schema up to date, or to the named migration (tests of a migration start from the
 * one before it); safe to run at every start and from several instances.
 */
export async function migrateToLatest(database: Database, upTo?: string): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(database) };
  const migrator = new Migrator({ db: database.db, provider });
  const { error, results } = upTo ? await migrator.migrateTo(upTo) : await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
