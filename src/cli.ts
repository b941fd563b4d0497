#!/usr/bin/env node
import { Command, InvalidArgumentError } from 'commander';
import { AccountService, DEFAULT_ACCOUNT } from './accounts/service.js';
import { AssetService } from './assets/service.js';
import { seedAssets } from './assets/synthetic.js';
import { FileBlobStore } from './storage/file-blob-store.js';
import { loadConfig, type Config } from './config.js';
import { formatOfPath, importConversions, openSource, readRecords, type SourceRecord } from './conversions/import.js';
import { syntheticConversions } from './conversions/synthetic.js';
import { openDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { formatTimestamp } from './filters/timestamps.js';
import { serve } from './server.js';

/** Opens the configured database, brings it up to date, runs `work`, and closes it. */
async function withDatabase<T>(work: (database: Database, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = openDatabase(config);
  try {
    await migrateToLatest(database);
    return await work(database, config);
  } finally {
    await database.close();
  }
}

const count = (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
};

const program = new Command('acds').description('Asset and Conversion Data Service').showHelpAfterError();

program.command('serve').description('run the service').action(() => serve());

program
  .command('migrate')
  .description('bring the database schema up to date')
  .action(() =>
    withDatabase(async (database) => {
      const applied = await migrateToLatest(database);
      console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'the schema is up to date');
    }),
  );

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

program
  .command('conversions')
  .description('conversion data')
  .command('import')
  .description('import conversions from NDJSON (.ndjson, .jsonl, - for standard input) or CSV (.csv)')
  .argument('<file>')
  .option('--account <name>', 'account name', DEFAULT_ACCOUNT)
  .action((file: string, { account }: { account: string }) =>
    withDatabase(async ({ db }) => {
      const format = formatOfPath(file);
      const inAccount = async (trx: typeof db) => (await new AccountService(trx).ensureAccount(account)).id;
      const result = await importConversions(db, inAccount, readRecords(openSource(file), format), {
        onProblem: ({ line, reason }) => console.error(`line ${line}: ${reason}`),
        onProgress: (read) => console.error(`read ${read} rows...`),
      });
      console.log(`imported ${result.inserted} conversions, skipped ${result.skipped} already present (${result.read} read)`);
    }),
  );

program
  .command('seed')
  .description('add realistic synthetic data')
  .option('--conversions <n>', 'how many conversions', count, 1000)
  .option('--assets <n>', 'how many assets', count, 22)
  .option('--account <name>', 'account name', DEFAULT_ACCOUNT)
  .action(({ conversions, assets, account }: { conversions: number; assets: number; account: string }) =>
    withDatabase(async (database, config) => {
      const { db } = database;
      const { id } = await new AccountService(db).ensureAccount(account);
      const records = (function* (): Generator<SourceRecord> {
        let line = 0;
        for (const value of syntheticConversions(conversions)) yield { line: ++line, record: { value } };
      })();
      const result = await importConversions(db, id, records, {
        onProblem: ({ line, reason }) => console.error(`synthetic row ${line}: ${reason}`),
        onProgress: (read) => console.error(`generated ${read} rows...`),
      });
      await seedAssets(new AssetService(database, new FileBlobStore(config.dataDir)), id, assets);
      console.log(`added ${result.inserted} conversions and ${assets} assets to account ${account}`);
    }),
  );

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
