import path from 'node:path';
import type { Config } from '../config.js';
import { sqliteFile } from '../db/database.js';
import type { S3Options } from '../storage/s3-blob-store.js';

/**
 * A database URL fit to print: without its password, whether given before the host or as a
 * parameter (`?password=`, `?sslpassword=`, which PostgreSQL's clients take too).
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const name of [...parsed.searchParams.keys()]) if (/password/i.test(name)) parsed.searchParams.set(name, '***');
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** Which database, as the command line names it to an operator. */
export function describeDatabase(databaseUrl: string | undefined, dataDir: string): string {
  return databaseUrl ? `PostgreSQL ${redactUrl(databaseUrl)}` : `SQLite ${sqliteFile(dataDir)}`;
}

/** Where asset bytes are, as the command line names it to an operator. */
export function describeBlobStore(s3: S3Options | undefined, dataDir: string): string {
  return s3 ? `S3 bucket ${s3.bucket}${s3.endpoint ? ` at ${s3.endpoint}` : ''}` : `files under ${path.join(dataDir, 'blobs')}`;
}

/** Everything the service keeps its state in, on the line it prints as it starts. */
export function describeStorage(config: Pick<Config, 'databaseUrl' | 'dataDir' | 's3' | 'redisUrl'>): string {
  const limit = config.redisUrl ? 'rate limit: Redis' : 'rate limit: this process';
  return `data: ${describeDatabase(config.databaseUrl, config.dataDir)}; asset bytes: ${describeBlobStore(config.s3, config.dataDir)}; ${limit}`;
}
