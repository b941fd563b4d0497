import type { Config } from '../config.js';
import type { BlobStore } from './blob-store.js';
import { FileBlobStore } from './file-blob-store.js';

/**
 * The blob store the configuration selects: S3 when S3_BUCKET is set, else files under
 * DATA_DIR. Only the service itself, as it starts, may remove the temporary files of puts a
 * crash interrupted (`removeInterruptedPuts`): local files belong to that one instance, and a
 * command run beside it must leave its uploads in flight alone.
 */
export async function openBlobStore(config: Pick<Config, 's3' | 'dataDir'>, { removeInterruptedPuts = false } = {}): Promise<BlobStore> {
  // Loaded only when used: the AWS SDK added about 6 MiB to the RSS of every process that loaded it.
  if (config.s3) return new (await import('./s3-blob-store.js')).S3BlobStore(config.s3);
  const store = new FileBlobStore(config.dataDir);
  if (removeInterruptedPuts) await store.removeInterruptedPuts();
  return store;
}
