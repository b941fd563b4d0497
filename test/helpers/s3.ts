// A real S3-speaking server (s3rver) on loopback, for the S3 blob store and the scaled-out configuration.
import fs from 'node:fs';
import S3rver from 's3rver';
import type { S3Options } from '../../src/storage/s3-blob-store.js';
import { tempDir } from './database.js';

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
