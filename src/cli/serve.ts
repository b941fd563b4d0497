import { AccountService } from '../accounts/service.js';
import { buildApp } from '../app.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { openBlobStore } from '../storage/open-blob-store.js';
import { missingNodeFlags } from './node-flags.js';
import { describeStorage } from './storage.js';

const STATISTICS_EVERY_MS = 60 * 60 * 1000;
/** Requests in flight get this long to finish after SIGTERM before the process exits anyway. */
const SHUTDOWN_DEADLINE_MS = 25_000;

/** `npm start`: check the configuration, bring the database up to date, bootstrap, listen. */
export async function serve(): Promise<void> {
  const config = loadConfigOrExit();
  const missing = missingNodeFlags();
  if (missing.length > 0)
    console.warn(
      `started without ${missing.join(' ')}: garbage collection may hold requests up (docs/deployment.md); npm start sets ${missing.length === 1 ? 'it' : 'them'}`,
    );
  await migrateWithoutTimeLimit(config);
  const database = openDatabase({ ...config, statementTimeoutMs: config.requestStatementTimeoutMs });
  // Fresh statistics soon after the start, not before it: on SQLite they are written, and a
  // writer of another process (an import) may hold the file a while.
  const refreshStatistics = () =>
    database.refreshStatistics().catch((error) => console.error(`refreshing the statistics failed (${error.message}); the next run tries again`));
  void refreshStatistics();
  const blobs = await openBlobStore(config, { removeInterruptedPuts: true });
  const app = await buildApp({ config, database, blobs });

  // Rows that arrive otherwise than by an import (and imports of another instance) shift the statistics too.
  const statisticsTimer = setInterval(refreshStatistics, STATISTICS_EVERY_MS);
  statisticsTimer.unref();

  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    setTimeout(() => {
      app.log.error('requests in flight did not finish in time; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    clearInterval(statisticsTimer);
    await app.close();
    await Promise.all([database.close(), blobs.close()]);
    app.log.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  // The database's threads and the index's process would otherwise keep a service that cannot
  // start running.
  const stop = async (why: string) => {
    console.error(why);
    await app.close();
    await Promise.all([database.close(), blobs.close()]);
    process.exit(1);
  };
  let address = '';
  try {
    address = await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await stop(`cannot listen on HOST ${config.host}, PORT ${config.port}: ${(error as Error).message}`);
  }
  // Made once the service listens: a key made by a start that then failed would never be shown.
  let createdKey: string | undefined;
  try {
    createdKey = await new AccountService(database.db).bootstrap(config.bootstrapApiKey);
  } catch (error) {
    await stop(`cannot make the account default and its key: ${(error as Error).message}`);
  }
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
