import { AccountService } from './accounts/service.js';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { AssetService } from './assets/service.js';
import { FileBlobStore } from './storage/file-blob-store.js';

/** `npm start`: check the configuration, bring the database up to date, bootstrap, listen. */
export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`configuration error: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }

  const database = openDatabase(config);
  await migrateToLatest(database);
  const createdKey = await new AccountService(database.db).bootstrap(config.bootstrapApiKey);
  const blobs = new FileBlobStore(config.dataDir);
  await blobs.removeInterruptedPuts();
  // On one machine no other instance has an upload in flight: sweep everything journalled.
  const swept = await new AssetService(database, blobs).sweepOrphanedBlobs(0);
  const app = await buildApp({ config, database, blobs });
  if (swept > 0) app.log.info({ swept }, 'removed the bytes of writes that a stop interrupted');

  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  if (config.redisUrl) {
    app.log.warn('REDIS_URL is set, but this version keeps rate-limit counters in this process: the limit is per instance');
  }
  const address = await app.listen({ port: config.port, host: config.host });
  const where = config.databaseUrl ? 'PostgreSQL' : `SQLite in ${config.dataDir}`;
  console.log(`acds is listening on ${address} (data: ${where}); API reference at ${address}/docs`);
  if (createdKey) {
    console.log('First start: created the account "default" and this API key for it. It is shown only once:');
    console.log(createdKey);
  }
}
