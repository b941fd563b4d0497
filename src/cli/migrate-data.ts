import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream';
import type { Kysely } from 'kysely';
import { withoutNul } from '../carts/service.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { openDatabase, sqliteFile, type Database } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import type { DatabaseSchema } from '../db/schema.js';
import type { BlobStore } from '../storage/blob-store.js';
import { MeasuringStream } from '../storage/measure.js';
import { openBlobStore } from '../storage/open-blob-store.js';
import type { S3Options } from '../storage/s3-blob-store.js';
import { describeBlobStore, describeDatabase } from './storage.js';

/**
 * `migrate-data`: copies everything the service holds (the rows of every table, ids kept, and
 * every asset's bytes, keys kept) from the configured source to a new, empty destination, e.g.
 * from the embedded default (SQLite + files in DATA_DIR) to PostgreSQL + S3.
 *
 * All rows go in within ONE destination transaction, read from one snapshot of the source. If
 * anything fails (a row, a blob, a size or hash that does not match, the process killed) that
 * transaction rolls back: the destination database is left migrated but empty, and the command
 * can simply be run again. Bytes already copied stay in the destination store under their keys,
 * unreferenced; a rerun overwrites them with the same bytes.
 */

/** The command line's view of the destination, as commander parses the options. */
export interface DestinationOptions {
  toDatabase?: string;
  toDataDir?: string;
  toS3Bucket?: string;
  toS3Endpoint?: string;
  toS3Region?: string;
  toS3AccessKeyId?: string;
  toS3SecretAccessKey?: string;
  toS3ForcePathStyle?: boolean;
}

export interface Destination {
  /** PostgreSQL; undefined means SQLite in `dataDir`. */
  databaseUrl: string | undefined;
  /** The destination's DATA_DIR: its SQLite file and/or its asset bytes; undefined when neither is local. */
  dataDir: string | undefined;
  /** Set when the asset bytes go to S3. */
  s3: S3Options | undefined;
}

/** A problem the operator can fix; printed as it is, without a stack. */
export class MigrateDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrateDataError';
  }
}

const OPTION_OF_VARIABLE: Record<string, string> = {
  DATABASE_URL: '--to-database',
  DATA_DIR: '--to-data-dir',
  S3_BUCKET: '--to-s3-bucket',
  S3_ENDPOINT: '--to-s3-endpoint',
  S3_REGION: '--to-s3-region',
  S3_ACCESS_KEY_ID: '--to-s3-access-key-id',
  S3_SECRET_ACCESS_KEY: '--to-s3-secret-access-key',
  S3_FORCE_PATH_STYLE: '--to-s3-force-path-style',
};

/**
 * Checks the destination options with the very rules the service applies to its environment
 * (loadConfig), reporting problems by option name.
 */
export function destinationFromOptions(options: DestinationOptions): Destination {
  const { toDatabase, toDataDir, toS3Bucket } = options;
  if (!toDatabase && !toDataDir) {
    throw new MigrateDataError('give the destination database: --to-database postgres://... (or --to-data-dir DIR for SQLite there)');
  }
  if (!toS3Bucket && !toDataDir) {
    throw new MigrateDataError('give where the asset bytes go: --to-s3-bucket BUCKET (with --to-s3-* as needed) or --to-data-dir DIR');
  }
  if (toDatabase && toS3Bucket && toDataDir) {
    throw new MigrateDataError('--to-data-dir is not used when both --to-database and --to-s3-bucket are given; leave it out');
  }
  const env: Record<string, string | undefined> = {
    DATABASE_URL: toDatabase,
    DATA_DIR: toDataDir,
    S3_BUCKET: toS3Bucket,
    S3_ENDPOINT: options.toS3Endpoint,
    S3_REGION: options.toS3Region,
    S3_ACCESS_KEY_ID: options.toS3AccessKeyId,
    S3_SECRET_ACCESS_KEY: options.toS3SecretAccessKey,
    S3_FORCE_PATH_STYLE: options.toS3ForcePathStyle ? 'true' : undefined,
  };
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const message = error.message.replace(/\b[A-Z][A-Z0-9_]+\b/g, (name) => OPTION_OF_VARIABLE[name] ?? name);
    throw new MigrateDataError(message);
  }
  return { databaseUrl: config.databaseUrl, dataDir: toDataDir ? path.resolve(toDataDir) : undefined, s3: config.s3 };
}

export const TABLES = ['accounts', 'api_keys', 'conversions', 'conversion_versions', 'assets', 'cart_receivers', 'cart_events'] as const;
export type TableName = (typeof TABLES)[number];

/**
 * Each copied table (parents before children, for the foreign keys) and the columns it is read
 * in order of, unique, for keyset pagination. Not copied: blob_journal, which at rest lists only
 * bytes no asset uses (the service sweeps them, and those bytes are not copied either);
 * conversion_imports, each mark read once by the index beside the import that made it; and
 * conversions_identity, which names the destination itself (a columnar index built from another
 * database is rebuilt).
 */
const KEYS: Record<TableName, readonly string[]> = {
  accounts: ['id'],
  api_keys: ['id'],
  conversions: ['id'],
  conversion_versions: ['account_id'],
  assets: ['id'],
  cart_receivers: ['id'],
  cart_events: ['id'],
};

/** Parameters in one INSERT, below SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_PARAMETERS = 30_000;
/** Blobs copied at the same time. */
const BLOB_CONCURRENCY = 4;

export interface TransferSummary {
  rows: Record<TableName, number>;
  /** Asset blobs copied (or, when source and destination share the store, checked in place). */
  blobs: number;
  bytes: number;
  bytesInPlace: boolean;
}

interface End {
  database: Database;
  blobs: BlobStore;
}

export interface TransferOptions {
  batchSize: number;
  /** The bytes are already where the destination reads them (same folder): check them, do not copy. */
  bytesInPlace?: boolean;
  log: (message: string) => void;
}

type Row = Record<string, unknown>;
type AnyDb = Kysely<any>;

/** Fails unless the destination holds no account (and so, by the foreign keys, nothing else either). */
async function refuseUnlessEmpty(db: Kysely<DatabaseSchema>): Promise<void> {
  const accounts = await db.selectFrom('accounts').select('name').orderBy('id').limit(3).execute();
  if (accounts.length === 0) return;
  const { n } = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const names = accounts.map((a) => a.name).join(', ');
  throw new MigrateDataError(
    `the destination database already holds ${Number(n)} account(s) (${names}${Number(n) > 3 ? ', ...' : ''}); ` +
      'migrate-data copies only into an empty database and never merges. Nothing was changed. ' +
      'If a service was started on it already (which creates the account default), drop and recreate the database and run migrate-data again.',
  );
}

/** One table's rows in batches of `batchSize`, in key order, each batch read after the last one's key. */
async function* readBatches(from: AnyDb, table: TableName, batchSize: number): AsyncGenerator<Row[]> {
  const key = KEYS[table];
  let last: Row | undefined;
  for (;;) {
    let query = from.selectFrom(table).selectAll();
    if (last) {
      const after = last;
      query =
        key.length === 1
          ? query.where(key[0]!, '>', after[key[0]!])
          : query.where(({ eb, refTuple, tuple }) => eb(refTuple(key[0]!, key[1]!), '>', tuple(after[key[0]!], after[key[1]!])));
    }
    for (const column of key) query = query.orderBy(column);
    const rows = (await query.limit(batchSize).execute()) as Row[];
    if (rows.length > 0) yield rows;
    if (rows.length < batchSize) return;
    last = rows.at(-1);
  }
}

async function insertRows(to: AnyDb, table: TableName, rows: Row[]): Promise<void> {
  // A cart event kept before NULs were replaced on receipt (SQLite holds them; PostgreSQL's text cannot).
  if (table === 'cart_events') rows = rows.map(withoutNul);
  const columns = Object.keys(rows[0]!).length;
  const perInsert = Math.max(1, Math.floor(MAX_PARAMETERS / columns));
  for (let start = 0; start < rows.length; start += perInsert) {
    await to
      .insertInto(table)
      .values(rows.slice(start, start + perInsert))
      .execute();
  }
}

/** Copies (or checks in place) one asset's bytes; resolves with their size once verified. */
async function transferBlob(row: Row, source: BlobStore, destination: BlobStore, inPlace: boolean): Promise<number> {
  const key = row.blob_key as string;
  const what = `asset ${String(row.id)} (bytes under ${key})`;
  const stat = await source.stat(key);
  if (!stat) throw new MigrateDataError(`${what}: the bytes are missing from the source store`);
  const expected = row.size === null || row.size === undefined ? stat.size : Number(row.size);
  if (stat.size !== expected) throw new MigrateDataError(`${what}: the source holds ${stat.size} bytes but the row says ${expected}`);
  if (inPlace) return expected;

  const bytes = await source.read(key);
  if (!bytes) throw new MigrateDataError(`${what}: the bytes are missing from the source store`);
  const measure = new MeasuringStream(0);
  // pipeline() passes a read failure on to the put, which then fails instead of waiting.
  const measured = pipeline(bytes, measure, () => {});
  await destination.put(key, measured);
  if (measure.size !== expected) throw new MigrateDataError(`${what}: ${measure.size} bytes were read but the row says ${expected}`);
  const etag = measure.digest().slice(0, 32);
  if (typeof row.etag === 'string' && row.etag !== '' && etag !== row.etag) {
    throw new MigrateDataError(`${what}: the bytes do not match the asset's ETag ${row.etag} (read ${etag})`);
  }
  const stored = await destination.stat(key);
  if (stored?.size !== expected) {
    throw new MigrateDataError(`${what}: the destination holds ${stored?.size ?? 'no'} bytes after the copy, expected ${expected}`);
  }
  return expected;
}

/** Runs `work` on every item, at most `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Copies every row and every asset's bytes from `source` to the empty `destination` (both already
 * migrated), within one destination transaction over one source snapshot, then moves the
 * destination's id counters past the copied ids and the source's own counters.
 */
export async function transferData(source: End, destination: End, options: TransferOptions): Promise<TransferSummary> {
  const { batchSize, log } = options;
  const bytesInPlace = options.bytesInPlace ?? false;
  const summary: TransferSummary = {
    rows: Object.fromEntries(TABLES.map((table) => [table, 0])) as Record<TableName, number>,
    blobs: 0,
    bytes: 0,
    bytesInPlace,
  };
  // One consistent view of the source: a read transaction (SQLite's WAL, or PostgreSQL's repeatable read).
  let snapshot = source.database.db.transaction();
  if (source.database.engine === 'postgres') snapshot = snapshot.setIsolationLevel('repeatable read').setAccessMode('read only');

  await snapshot.execute(async (fromTyped) => {
    const from = fromTyped as AnyDb;
    await destination.database.db.transaction().execute(async (toTyped) => {
      const to = toTyped as AnyDb;
      // Again inside the transaction: another run may have filled it since the first look.
      await refuseUnlessEmpty(toTyped);
      for (const table of TABLES) {
        const { n } = await from
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        const total = Number(n);
        let lastReport = Date.now();
        const report = (final: boolean) => {
          if (!final && Date.now() - lastReport < 1000) return;
          lastReport = Date.now();
          const bytes =
            table === 'assets' ? `; asset bytes: ${summary.blobs} files, ${summary.bytes} bytes ${bytesInPlace ? 'checked in place' : 'copied'}` : '';
          log(`${table}: ${summary.rows[table]} of ${total} rows copied${bytes}`);
        };
        for await (const rows of readBatches(from, table, batchSize)) {
          await insertRows(to, table, rows);
          summary.rows[table] += rows.length;
          if (table === 'assets') {
            await eachLimited(
              rows.filter((row) => row.blob_key !== null && row.blob_key !== undefined),
              BLOB_CONCURRENCY,
              async (row) => {
                // Awaited first: `summary.bytes += await ...` would read the total before the wait and lose concurrent additions.
                const size = await transferBlob(row, source.blobs, destination.blobs, bytesInPlace);
                summary.bytes += size;
                summary.blobs += 1;
                report(false);
              },
            );
          }
          report(false);
        }
        if (summary.rows[table] !== total) {
          throw new MigrateDataError(`${table}: counted ${total} rows in the source but read ${summary.rows[table]}`);
        }
        report(true);
      }
      // Past the source's counters too: an id the source handed out and deleted is not handed out again.
      await destination.database.resetSequences(toTyped, await source.database.idCounters(fromTyped));
      log('committing...');
    });
  });
  return summary;
}

/**
 * The whole command: opens both ends, brings both schemas up to date, refuses a destination
 * that holds anything, transfers, closes. Progress goes to `log`; the summary is returned.
 */
export async function migrateData(
  sourceConfig: Pick<Config, 'databaseUrl' | 'dataDir' | 's3'>,
  destination: Destination,
  options: { batchSize: number; log: (message: string) => void },
): Promise<{ summary: TransferSummary; from: string; to: string }> {
  const { log } = options;
  const from = `${describeDatabase(sourceConfig.databaseUrl, sourceConfig.dataDir)} with asset bytes in ${describeBlobStore(sourceConfig.s3, sourceConfig.dataDir)}`;
  const to = `${describeDatabase(destination.databaseUrl, destination.dataDir ?? '')} with asset bytes in ${describeBlobStore(destination.s3, destination.dataDir ?? '')}`;

  const sameDatabase = destination.databaseUrl
    ? destination.databaseUrl === sourceConfig.databaseUrl
    : !sourceConfig.databaseUrl && path.resolve(destination.dataDir!) === path.resolve(sourceConfig.dataDir);
  if (sameDatabase)
    throw new MigrateDataError(`the destination database is the source (${describeDatabase(destination.databaseUrl, destination.dataDir ?? '')})`);
  if (!sourceConfig.databaseUrl && !fs.existsSync(sqliteFile(sourceConfig.dataDir))) {
    throw new MigrateDataError(`there is no source database at ${sqliteFile(sourceConfig.dataDir)}; set DATA_DIR (or DATABASE_URL) as the service has them`);
  }

  log(`from: ${from}`);
  log(`to:   ${to}`);
  const sourceDatabase = openDatabase({ ...sourceConfig, poolSize: 2 });
  const destinationDatabase = openDatabase({ databaseUrl: destination.databaseUrl, dataDir: destination.dataDir ?? '', poolSize: 2 });
  const stores: BlobStore[] = [];
  try {
    await migrateToLatest(sourceDatabase);
    const applied = await migrateToLatest(destinationDatabase);
    if (applied.length > 0) log(`destination schema: applied ${applied.join(', ')}`);
    await refuseUnlessEmpty(destinationDatabase.db);
    const { n: accounts } = await sourceDatabase.db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(accounts) === 0) {
      throw new MigrateDataError(`the source (${describeDatabase(sourceConfig.databaseUrl, sourceConfig.dataDir)}) holds no account: nothing to migrate`);
    }

    const sourceBlobs = await openBlobStore(sourceConfig);
    stores.push(sourceBlobs);
    const destinationBlobs = await openBlobStore({ s3: destination.s3, dataDir: destination.dataDir ?? '' });
    stores.push(destinationBlobs);
    await sourceBlobs.check();
    await destinationBlobs.check();
    const bytesInPlace = sameStore(sourceConfig, destination);
    if (bytesInPlace) log('the asset bytes are already where the destination keeps them: they are checked, not copied');

    const summary = await transferData(
      { database: sourceDatabase, blobs: sourceBlobs },
      { database: destinationDatabase, blobs: destinationBlobs },
      { batchSize: options.batchSize, bytesInPlace, log },
    );
    return { summary, from, to };
  } finally {
    for (const store of stores) await store.close();
    await Promise.all([sourceDatabase.close(), destinationDatabase.close()]);
  }
}

function sameStore(source: Pick<Config, 'dataDir' | 's3'>, destination: Destination): boolean {
  if (source.s3 && destination.s3) {
    return source.s3.bucket === destination.s3.bucket && (source.s3.endpoint ?? '') === (destination.s3.endpoint ?? '');
  }
  if (!source.s3 && !destination.s3) return path.resolve(source.dataDir) === path.resolve(destination.dataDir!);
  return false;
}

/** The summary on standard output: one line per table, then the bytes. */
export function formatSummary({ summary, to }: { summary: TransferSummary; to: string }): string {
  const width = Math.max(...TABLES.map((t) => t.length), 'asset bytes'.length) + 2;
  const lines = [`migrated to ${to}`];
  for (const table of TABLES) lines.push(`${table.padEnd(width)}${summary.rows[table]}`);
  lines.push(`${'asset bytes'.padEnd(width)}${summary.blobs} files, ${summary.bytes} bytes ${summary.bytesInPlace ? 'checked in place' : 'copied'}`);
  return lines.join('\n');
}
