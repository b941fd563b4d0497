// Test databases: the engines each database suite runs on, a fresh migrated database per suite, and its config.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

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
