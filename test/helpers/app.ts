// The test app: a fresh database with the real Fastify app on it, configured per engine, and accounts to call it with.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AccountService } from '../../src/accounts/service.js';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { BlobStore } from '../../src/storage/blob-store.js';
import { openBlobStore } from '../../src/storage/open-blob-store.js';
import { freshDatabase, testConfig, type TestDatabase } from './database.js';
import { startS3Server } from './s3.js';

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
