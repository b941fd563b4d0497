import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import S3rver from 's3rver';
import { AccountService } from '../src/accounts/service.js';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { importConversions, type LineProblem, type SourceRecord } from '../src/conversions/import.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { sqliteFiles } from '../src/db/sqlite/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { BlobStore } from '../src/storage/blob-store.js';
import { openBlobStore } from '../src/storage/open-blob-store.js';
import type { S3Options } from '../src/storage/s3-blob-store.js';

/** The databases every database test runs on: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export const ENGINES: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** Runs the same suite once per engine, as Kysely's own tests do. */
export function describeEachEngine(title: string, suite: (engine: 'sqlite' | 'postgres') => void): void {
  for (const engine of ENGINES) describe(`${title} [${engine}]`, () => suite(engine));
}

export function tempDir(prefix = 'acds-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface TestDatabase extends Database {
  dataDir: string;
  databaseUrl: string | undefined;
}

/**
 * A fresh, migrated, empty database of the engine: a new SQLite file in a temporary folder, or
 * a new PostgreSQL database on the TEST_DATABASE_URL server. `close` removes it again.
 * `upTo` stops the migrations at the one named, for testing the next.
 */
export async function freshDatabase(
  engine: 'sqlite' | 'postgres',
  { upTo, statementTimeoutMs }: { upTo?: string; statementTimeoutMs?: number } = {},
): Promise<TestDatabase> {
  const dataDir = tempDir();
  let databaseUrl: string | undefined;
  let drop = async () => {};
  if (engine === 'postgres') {
    const serverUrl = process.env.TEST_DATABASE_URL!;
    const name = `acds_test_${randomBytes(6).toString('hex')}`;
    await adminQuery(serverUrl, `create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    drop = () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
  }
  const database = openDatabase({ databaseUrl, dataDir, poolSize: 4, statementTimeoutMs });
  await migrateToLatest(database, upTo);
  return {
    ...database,
    dataDir,
    databaseUrl,
    close: async () => {
      await database.close();
      await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function adminQuery(serverUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export function testConfig(database: TestDatabase, overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}),
    dataDir: database.dataDir,
    databaseUrl: database.databaseUrl,
    logLevel: 'silent',
    ...overrides,
  };
}

export interface TestContext {
  app: FastifyInstance;
  database: TestDatabase;
  accounts: AccountService;
  /** Where the app keeps asset bytes: files under the database's dataDir on SQLite, an S3 server on PostgreSQL. */
  blobs: BlobStore;
  close(): Promise<void>;
}

/**
 * A fresh database and an app on it; the rate limits (API and public) are off unless the test asks for them.
 * On SQLite the app runs as the embedded default does (bytes on local disk, counters in the
 * process); on PostgreSQL as one of many scaled-out instances does: bytes in S3 (a real
 * S3-speaking server on loopback) and, when TEST_REDIS_URL is set, rate-limit counters in Redis.
 * So every database test also proves the scaled-out configuration.
 */
export async function startTestApp(
  engine: 'sqlite' | 'postgres',
  overrides: Partial<Config> = {},
  // Counters in Redis outlive the app: each test app counts apart unless told to share.
  { redisNamespace = `acds-test:${randomBytes(6).toString('hex')}:` } = {},
): Promise<TestContext> {
  const database = await freshDatabase(engine, { statementTimeoutMs: overrides.requestStatementTimeoutMs });
  const s3 = engine === 'postgres' ? await startS3Server() : undefined;
  const config = testConfig(database, {
    rateLimit: { max: 0, windowMs: 60_000 },
    publicRateLimit: { max: 0, windowMs: 60_000 },
    s3: s3?.options,
    redisUrl: engine === 'postgres' ? process.env.TEST_REDIS_URL : undefined,
    ...overrides,
  });
  const blobs = await openBlobStore(config);
  const app = await buildApp({ config, database, blobs, redisNamespace });
  await app.ready();
  return {
    app,
    database,
    accounts: new AccountService(database.db),
    blobs,
    close: async () => {
      await app.close();
      await blobs.close();
      await s3?.close();
      await database.close();
    },
  };
}

/** Creates an account with a key; returns the account id and the key. */
export async function accountWithKey(accounts: AccountService, name: string): Promise<{ accountId: number; key: string }> {
  const key = await accounts.createKey(name);
  const { accountId } = (await accounts.authenticate(key))!;
  return { accountId, key };
}

/** Imports records into an account through the real import path; throws on any bad record. */
export async function insertConversions(database: Database, accountId: number, values: object[]): Promise<void> {
  const records: SourceRecord[] = values.map((value, index) => ({ line: index + 1, record: { value } }));
  const problems: string[] = [];
  const options = { onProblem: (p: LineProblem) => problems.push(`${p.line}: ${p.reason}`) };
  await importConversions(database, accountId, records, options).catch(
    (error) => {
      throw new Error(`${error.message}\n${problems.join('\n')}`);
    },
  );
}

/**
 * Another writer of the account inside its transaction, such as a key being made on the command
 * line: on SQLite it holds the main file's one write lock, on PostgreSQL the account's row, which
 * every asset write of the account updates (its data version). Returns what ends the transaction.
 */
export async function holdWrites(database: { dataDir: string; databaseUrl: string | undefined }, accountId: number): Promise<() => Promise<void>> {
  if (database.databaseUrl === undefined) return holdSqliteWriter(sqliteFiles(database.dataDir).main);
  return holdInPostgres(database.databaseUrl, 'select 1 from accounts where id = $1 for update', [accountId]);
}

/**
 * What a running import holds until its commit: on SQLite the conversions file's one write lock,
 * on PostgreSQL the account's conversion version row. Returns what ends the transaction.
 */
export async function holdImportWrites(database: { dataDir: string; databaseUrl: string | undefined }, accountId: number): Promise<() => Promise<void>> {
  if (database.databaseUrl === undefined) return holdSqliteWriter(sqliteFiles(database.dataDir).conversions);
  return holdInPostgres(
    database.databaseUrl,
    'insert into conversion_versions values ($1, 1) on conflict (account_id) do update set version = conversion_versions.version + 1',
    [accountId],
  );
}

async function holdSqliteWriter(file: string): Promise<() => Promise<void>> {
  const connection = new SQLite(file);
  connection.exec('begin immediate');
  return async () => {
    connection.exec('rollback');
    connection.close();
  };
}

async function holdInPostgres(databaseUrl: string, statement: string, parameters: unknown[]): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('begin');
  await client.query(statement, parameters);
  return async () => {
    await client.query('rollback');
    await client.end();
  };
}

/**
 * `length` characters of `bytes` bytes each in UTF-8, in no pattern a database could compress
 * away: a value at a byte limit that must fit an index entry as it is.
 */
export function variedText(length: number, bytes: 1 | 2 | 3): string {
  const [first, count] = bytes === 1 ? [0x61, 26] : bytes === 2 ? [0x400, 0x100] : [0x4e00, 0x5000];
  return Array.from({ length }, (_, index) => String.fromCodePoint(first + ((Math.imul(index + 1, 2654435761) >>> 0) % count))).join('');
}

/** A valid conversion record with every field set; override what the test is about. */
export function conversionRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    created_at: '2026-03-15T12:00:00Z',
    cart_integration: 'clickbank',
    receipt: `R-${randomBytes(6).toString('hex')}`,
    original_receipt: null,
    amount: 19.99,
    tax_amount: 1.5,
    shipping_amount: 0,
    products: [{ sku: 'SKU-1', price: 19.99, qty: 1 }],
    email: 'buyer@example.com',
    user_id: 'u1',
    page_id: 1001,
    page_version: 'a',
    upsell_flow_id: 'flow-1',
    upsell_session: 'session-1',
    upsell_path: '1001',
    upsell_group: 'front',
    upsell_step: 0,
    country: 'US',
    mobile: false,
    affiliate: 'aff_alpha',
    vendor: 'acme',
    role: 'front_end',
    tracking_codes: [],
    referrer: 'https://www.google.com/',
    referrer_name: 'Google',
    referrer_medium: 'search',
    joint_venture_order: null,
    currency: 'USD',
    hostname: 'shop.example.com',
    utm_source: 'facebook',
    utm_medium: 'cpc',
    utm_campaign: 'launch',
    utm_content: 'ad-1',
    first_name: 'Ada',
    last_name: 'Lovelace',
    zip_code: '10001',
    payment_method: 'creditcard',
    affiliate_payouts: [],
    ...overrides,
  };
}

export interface TestS3Server {
  /** Options for a bucket of its own on the server, as S3BlobStore and the S3_* variables take them. */
  options: S3Options;
  close(): Promise<void>;
}

/** A real S3-speaking server (s3rver) on a free loopback port, with one empty bucket, its files in a temporary folder. */
export async function startS3Server(): Promise<TestS3Server> {
  const directory = tempDir('acds-s3-');
  const bucket = 'acds-test';
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = (await server.run()) as { port: number };
  return {
    options: {
      bucket,
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    },
    close: async () => {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The key of the account `default` in every service that spawnService starts (its BOOTSTRAP_API_KEY). */
export const SERVICE_KEY = `acds_${'k'.repeat(32)}`;
const ROOT = path.resolve(import.meta.dirname, '..');

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything the process printed on standard output so far. */
  output(): string;
}

/** The real service (`serve`) in a child process on a free port, on the given data; resolves once it listens. */
export async function spawnService(
  database: { dataDir: string; databaseUrl: string | undefined },
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: database.dataDir,
      DATABASE_URL: database.databaseUrl ?? '',
      BOOTSTRAP_API_KEY: SERVICE_KEY,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => (output += chunk));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before it listened:\n${output}`)));
  });
  return { child, baseUrl, output: () => output };
}

/** Stops a spawned service (SIGKILL unless told otherwise) and resolves with its exit code once it is gone. */
export async function stopService(service: ServiceProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return service.child.exitCode;
  const exited = once(service.child, 'exit');
  service.child.kill(signal);
  const [code] = await exited;
  return code as number | null;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the command line (`src/cli.ts`) to its end with exactly `env`; killed after `timeoutMs`. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<CliRun> {
  return startCli(args, env, timeoutMs).done;
}

/** The command line started, with its process (to kill) and what it printed once it ends. */
export function startCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const done = new Promise<CliRun>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, done };
}

export function succeeded(run: CliRun): CliRun {
  assert.equal(run.code, 0, `exit status 0; stderr: ${run.stderr}; stdout: ${run.stdout}`);
  return run;
}

export function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1)!.trim();
}

/** A valid PNG of the given size (8-bit RGB, one IDAT), written chunk by chunk with its CRCs. */
export function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(typed) >>> 0);
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour
  const rows = Buffer.alloc((1 + width * 3) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) rows.set([x * 40, y * 40, 200], y * (1 + width * 3) + 1 + x * 3);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
