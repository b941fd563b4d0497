#!/usr/bin/env node
import os from 'node:os';
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { AccountService, DEFAULT_ACCOUNT } from './accounts/service.js';
import { AssetService } from './assets/service.js';
import { RECEIVERS, type ReceiverName } from './carts/notification.js';
import { CartService } from './carts/service.js';
import { seedAssets } from './assets/synthetic.js';
import { loadConfig, type Config } from './config.js';
import { formatOfPath, importConversions, openSource, readRecords, type SourceRecord } from './conversions/import.js';
import { ignoredIdsWarning, ProblemReport, ProgressReport } from './conversions/import-report.js';
import { CONVERSION_SOURCE_COLUMNS } from './conversions/questions.js';
import { syntheticConversions } from './conversions/synthetic.js';
import { advanceCopyFor } from './db/columnar/advance-copy.js';
import { openDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { formatTimestamp } from './filters/timestamps.js';
import type { DestinationOptions } from './cli/migrate-data.js';
import { serve } from './cli/serve.js';
import { openBlobStore } from './storage/open-blob-store.js';

/** Opens the configured database, brings it up to date, runs `work`, and closes it. */
async function withDatabase<T>(work: (database: Database, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // The command line's work (an import, a migration) is long by nature: no statement time limit.
  const database = openDatabase({ ...config, commandLine: true });
  try {
    await migrateToLatest(database);
    return await work(database, config);
  } catch (error) {
    if (database.isBusy(error)) throw new Error('the database is busy with another writer, such as an import; run this again once it has finished');
    throw error;
  } finally {
    await database.close();
  }
}

/**
 * Imports are batch work, minutes of it: they run at lower priority (their database threads
 * too, which inherit it), so that a service on the same machine keeps answering promptly.
 */
function yieldToTheService(): void {
  try {
    os.setPriority(0, Math.min(19, os.getPriority(0) + 10));
  } catch {
    // Not allowed here: the import runs at the usual priority.
  }
}

/**
 * The database's statistics after an import: PostgreSQL plans the reads of entries by id (a
 * list page, an export batch) from them, and with statistics of a table that was empty it
 * scanned the account's whole index for each of an export's batches. Its autovacuum may be off,
 * or late. The conversions stay imported when this fails; the service refreshes them hourly.
 */
async function refreshStatisticsAfterImport(database: Database): Promise<void> {
  await database
    .refreshStatistics()
    .catch((error: Error) => console.error(`refreshing the database's statistics failed (${error.message}); the service refreshes them within the hour`));
}

const count = (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
};

const program = new Command('acds').description('Asset and Conversion Data Service').showHelpAfterError();

program
  .command('serve')
  .description('run the service')
  .action(() => serve());

program
  .command('migrate')
  .description('bring the database schema up to date')
  .action(async () => {
    // Not withDatabase, which would migrate before this could tell what it applies.
    const database = openDatabase(loadConfig());
    try {
      const applied = await migrateToLatest(database);
      console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'the schema is up to date');
    } finally {
      await database.close();
    }
  });

const keys = program.command('keys').description('manage API keys');
keys
  .command('create')
  .description('create a key (and the account if it is new); the key is the last line printed')
  .option('--account <name>', 'account name', DEFAULT_ACCOUNT)
  .action(({ account }: { account: string }) =>
    withDatabase(async ({ db }) => {
      const key = await new AccountService(db).createKey(account);
      console.log(`created a key for account ${account}; it is shown only once:`);
      console.log(key);
    }),
  );
keys
  .command('list')
  .description('list the keys of an account by prefix')
  .option('--account <name>', 'account name', DEFAULT_ACCOUNT)
  .action(({ account }: { account: string }) =>
    withDatabase(async ({ db }) => {
      for (const key of await new AccountService(db).listKeys(account)) {
        const state = key.revoked_at === null ? 'active' : `revoked ${formatTimestamp(key.revoked_at)}`;
        console.log(`${key.prefix}\tcreated ${formatTimestamp(key.created_at)}\t${state}`);
      }
    }),
  );
keys
  .command('revoke')
  .description('revoke the key with this prefix')
  .argument('<prefix>')
  .action((prefix: string) =>
    withDatabase(async ({ db }) => {
      await new AccountService(db).revokeKey(prefix);
      console.log(`revoked ${prefix}`);
    }),
  );

const carts = program.command('carts').description("connect carts' server-to-server notifications (docs/carts.md)");
const cartArgument = () => new Argument('<cart>', 'the cart').choices(RECEIVERS);
/** The account named, which must exist: carts are connected to an account that has keys. */
async function accountNamed(db: Database['db'], name: string): Promise<number> {
  const found = await new AccountService(db).findAccount(name);
  if (!found) throw new Error(`there is no account named ${name}; 'keys create --account ${name}' makes it`);
  return found.id;
}
carts
  .command('connect')
  .description("create the cart's receiver, or replace its token; its URL path is the last line printed")
  .addArgument(cartArgument())
  .option('--secret <secret>', "the cart's own secret: ClickBank's secret key, the Digistore24 or SvenCart IPN passphrase, the generic webhook's secret")
  .option('--account <name>', 'account name', DEFAULT_ACCOUNT)
  .action((cart: ReceiverName, { secret, account }: { secret?: string; account: string }) =>
    withDatabase(async (database, config) => {
      const path = await new CartService(database).connect(await accountNamed(database.db, account), cart, secret);
      console.log(`connected ${cart} to account ${account}; its URL is shown only once (connecting again replaces it):`);
      if (config.publicUrl) console.log(`${config.publicUrl}${path}`);
      else console.log('set PUBLIC_URL to the address carts reach the service at to have the whole URL printed; the path:');
      console.log(path);
    }),
  );
carts
  .command('list')
  .description('list the connected carts, with the first characters of their tokens')
  .option('--account <name>', 'account name', DEFAULT_ACCOUNT)
  .action(({ account }: { account: string }) =>
    withDatabase(async (database) => {
      for (const connected of await new CartService(database).receivers(await accountNamed(database.db, account))) {
        console.log(`${connected.cart}\t${connected.path}\tconnected ${connected.connected_at}`);
      }
    }),
  );
carts
  .command('disconnect')
  .description("delete the cart's receiver: its URL answers 404 from now on")
  .addArgument(cartArgument())
  .option('--account <name>', 'account name', DEFAULT_ACCOUNT)
  .action((cart: ReceiverName, { account }: { account: string }) =>
    withDatabase(async (database) => {
      if (!(await new CartService(database).disconnect(await accountNamed(database.db, account), cart))) {
        throw new Error(`${cart} is not connected to account ${account}`);
      }
      console.log(`disconnected ${cart} from account ${account}`);
    }),
  );

program
  .command('conversions')
  .description('conversion data')
  .command('import')
  .description('import conversions from NDJSON (.ndjson, .jsonl, - for standard input) or CSV (.csv)')
  .argument('<file>')
  .option('--account <name>', 'account name', DEFAULT_ACCOUNT)
  .action((file: string, { account }: { account: string }) => {
    yieldToTheService();
    return withDatabase(async (database) => {
      const format = formatOfPath(file);
      const source = await openSource(file);
      const inAccount = () => new AccountService(database.db).findOrCreateAccount(account);
      const problems = new ProblemReport((line) => console.error(line));
      const progress = new ProgressReport({ print: (line) => console.error(line), fractionRead: source.fractionRead });
      const advanceCopy = advanceCopyFor(database.conversionSource, CONVERSION_SOURCE_COLUMNS);
      const result = await importConversions(database, inAccount, readRecords(source.stream, format), {
        onProblem: (problem) => problems.add(problem),
        onProgress: (state) => progress.update(state),
        advanceCopy,
      }).finally(() => {
        problems.end();
        advanceCopy?.remove();
      });
      if (result.inserted > 0) await refreshStatisticsAfterImport(database);
      const warning = ignoredIdsWarning(result.ignoredIds);
      if (warning) console.error(warning);
      console.log(`imported ${result.inserted} conversions, skipped ${result.skipped} already present (${result.read} read)`);
    });
  });

program
  .command('seed')
  .description('add realistic synthetic data')
  .option('--conversions <n>', 'how many conversions', count, 1000)
  .option('--assets <n>', 'how many assets', count, 22)
  .option('--account <name>', 'account name', DEFAULT_ACCOUNT)
  .action(({ conversions, assets, account }: { conversions: number; assets: number; account: string }) => {
    yieldToTheService();
    return withDatabase(async (database, config) => {
      const { db } = database;
      const { id } = await new AccountService(db).ensureAccount(account);
      const records = (function* (): Generator<SourceRecord[]> {
        let line = 0;
        for (const value of syntheticConversions(conversions)) yield [{ line: ++line, record: { value } }];
      })();
      const progress = new ProgressReport({
        print: (line) => console.error(line),
        reading: 'generating',
        fractionRead: (rows) => rows / Math.max(conversions, 1),
      });
      const advanceCopy = advanceCopyFor(database.conversionSource, CONVERSION_SOURCE_COLUMNS);
      const result = await importConversions(database, id, records, {
        onProblem: ({ line, reason }) => console.error(`synthetic row ${line}: ${reason}`),
        onProgress: (state) => progress.update(state),
        advanceCopy,
      }).finally(() => advanceCopy?.remove());
      if (result.inserted > 0) await refreshStatisticsAfterImport(database);
      // Where the service reads asset bytes from: an S3 bucket when it is configured.
      const blobs = await openBlobStore(config);
      try {
        await seedAssets(new AssetService(database, blobs), id, assets);
      } finally {
        await blobs.close();
      }
      console.log(`added ${result.inserted} conversions and ${assets} assets to account ${account}`);
    });
  });

const positive = (value: string) => {
  const n = count(value);
  if (n < 1) throw new InvalidArgumentError('expected a whole number from 1');
  return n;
};

program
  .command('migrate-data')
  .description(
    "copy everything (every row with its id, and every asset's bytes under its key) from the storage this " +
      'service is configured with to a new, empty destination: e.g. from SQLite + files in DATA_DIR to PostgreSQL + S3',
  )
  .addOption(
    new Option('--to-database <url>', 'destination PostgreSQL database, postgres://...; without it, SQLite in --to-data-dir').env('MIGRATE_TO_DATABASE_URL'),
  )
  .option(
    '--to-data-dir <dir>',
    'destination data folder: the asset bytes go under it unless --to-s3-bucket is given, and the SQLite file unless --to-database is',
  )
  .option('--to-s3-bucket <bucket>', 'destination S3 bucket for the asset bytes')
  .option('--to-s3-endpoint <url>', 'its endpoint, for S3-compatible stores (default: AWS)')
  .option('--to-s3-region <region>', 'its region (default: us-east-1)')
  .option('--to-s3-access-key-id <id>', 'its access key id (default: the AWS SDK credential chain)')
  .addOption(new Option('--to-s3-secret-access-key <secret>', 'its secret access key').env('MIGRATE_TO_S3_SECRET_ACCESS_KEY'))
  .option('--to-s3-force-path-style', 'address the bucket in the path (most S3-compatible stores need it)')
  .option('--batch-size <n>', 'rows read and written at a time', positive, 1000)
  .addHelpText(
    'after',
    `
The SOURCE is what \`serve\` would use: DATA_DIR, DATABASE_URL and S3_* from the environment.
Stop the service first; what it writes after the copy starts is not copied.

The DESTINATION is given by the --to-* options and must be empty: its schema is brought up to
date, and if it already holds any account the command changes nothing and exits 1 (it never
merges). Do not start the service on it before migrating: that creates the account default.

All rows are copied inside ONE destination transaction, from one snapshot of the source, in
batches by id; each asset's bytes are streamed across and checked against its size and ETag.
On any failure the transaction rolls back: the destination database is left empty (schema
only) and the command can be run again; bytes already copied stay in the destination store
under the same keys and are overwritten by the rerun. On success the destination's id
sequences are moved past the copied ids, and the service can start with DATABASE_URL and S3_*
set to the destination; every API key keeps working, revoked keys stay revoked.

Progress goes to standard error; the summary (rows per table, bytes copied) to standard output.

Example:
  DATA_DIR=/var/lib/acds npm run cli -- migrate-data \
    --to-database postgres://acds@db.internal/acds \
    --to-s3-bucket acds-assets --to-s3-region eu-west-1
`,
  )
  .action(async (options: DestinationOptions & { batchSize: number }) => {
    // Loaded here, not with the other commands: it brings the AWS SDK along.
    const { destinationFromOptions, formatSummary, migrateData } = await import('./cli/migrate-data.js');
    const destination = destinationFromOptions(options);
    const started = Date.now();
    const result = await migrateData(loadConfig(), destination, { batchSize: options.batchSize, log: (line) => console.error(line) });
    console.error(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(formatSummary(result));
  });

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
