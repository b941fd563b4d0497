import { AccountService } from './accounts/service.js';
import { buildApp } from './app.js';
import { AssetService } from './assets/service.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { openBlobStore } from './storage/open-blob-store.js';

/** How long journalled bytes may wait for their row before a sweep of a shared bucket removes them. */
const SHARED_SWEEP_GRACE_SECONDS = 6 * 3600;
const SHARED_SWEEP_EVERY_MS = 15 * 60 * 1000;
const STATISTICS_EVERY_MS = 60 * 60 * 1000;
/** Requests in flight get this long to finish after SIGTERM before the process exits anyway. */
const SHUTDOWN_DEADLINE_MS = 25_000;

/** `npm start`: check the configuration, bring the database up to date, bootstrap, listen. */
export async function serve(): Promise<void> {
  const config = loadConfigOrExit();
  await migrateWithoutTimeLimit(config);
  const database = openDatabase({ ...config, statementTimeoutMs: config.requestStatementTimeoutMs });
  // Fresh statistics soon after the start, not before it: on SQLite they are written, and a
  // writer of another process (an import) may hold the file a while.
  const refreshStatistics = () =>
    database.refreshStatistics().catch((error) => console.error(`refreshing the statistics failed (${error.message}); the next run tries again`));
  void refreshStatistics();
  const createdKey = await new AccountService(database.db).bootstrap(config.bootstrapApiKey);
  const blobs = await openBlobStore(config);
  const app = await buildApp({ config, database, blobs });

  // Bytes on local disk belong to this one instance, so whatever is journalled at start was cut
  // off by a stop. In S3 another instance may be uploading right now: sweep only what is hours
  // old, and keep sweeping while running.
  const sweeper = new AssetService(database, blobs);
  const shared = config.s3 !== undefined;
  // A sweep that cannot run now (on SQLite, an import holding the one writer) is logged and
  // left to a later one; it never stops the start.
  const sweep = async (graceSeconds: number) => {
    try {
      const swept = await sweeper.sweepOrphanedBlobs(graceSeconds);
      if (swept > 0) app.log.info({ swept }, 'removed bytes that no asset uses, left by interrupted writes');
    } catch (error) {
      app.log.error({ err: error }, 'sweep failed; a later one removes what it left');
    }
  };
  await sweep(shared ? SHARED_SWEEP_GRACE_SECONDS : 0);
  const sweepTimer = shared ? setInterval(() => sweep(SHARED_SWEEP_GRACE_SECONDS), SHARED_SWEEP_EVERY_MS) : undefined;
  sweepTimer?.unref();
  // Rows that arrive otherwise than by an import (and imports of another instance) shift the statistics too.
  const statisticsTimer = setInterval(refreshStatistics, STATISTICS_EVERY_MS);
  statisticsTimer.unref();

  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    setTimeout(() => {
      app.log.error('requests in flight did not finish in time; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    clearInterval(sweepTimer);
    clearInterval(statisticsTimer);
    await app.close();
    await Promise.all([database.close(), blobs.close()]);
    app.log.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  const address = await app.listen({ port: config.port, host: config.host });
  console.log(`acds is listening on ${address} (${describeStorage(config)}); API reference at ${address}/docs`);
  if (createdKey) {
    console.log('First start: created the account "default" and this API key for it. It is shown only once:');
    console.log(createdKey);
  }
}

/**
 * Migrations may rewrite every row of a large table, far longer than any request's statement
 * may take: they run on a connection of their own without the limit.
 */
async function migrateWithoutTimeLimit(config: Config): Promise<void> {
  const database = openDatabase(config);
  try {
    await migrateToLatest(database);
  } finally {
    await database.close();
  }
}

function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`configuration error: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
}

function describeStorage(config: Config): string {
  const data = config.databaseUrl ? 'data: PostgreSQL' : `data: SQLite in ${config.dataDir}`;
  const bytes = config.s3 ? `asset bytes: S3 bucket ${config.s3.bucket}` : 'asset bytes: local disk';
  const limit = config.redisUrl ? 'rate limit: Redis' : 'rate limit: this process';
  return `${data}; ${bytes}; ${limit}`;
}
