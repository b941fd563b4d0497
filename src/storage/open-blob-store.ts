import type { Config } from '../config.js';
import type { BlobStore } from './blob-store.js';
import { FileBlobStore } from './file-blob-store.js';

/**
 * The blob store the configuration selects: S3 when S3_BUCKET is set, else files under
 * DATA_DIR. Temporary files of puts a crash interrupted are removed here, before any serving:
 * local files belong to this one instance.
 */
export async function openBlobStore(config: Pick<Config, 's3' | 'dataDir'>): Promise<BlobStore> {
  // Loaded only when used: the AWS SDK added about 6 MiB to the RSS of every process that loaded it.
  if (config.s3) return new (await import('./s3-blob-store.js')).S3BlobStore(config.s3);
  const store = new FileBlobStore(config.dataDir);
  await store.removeInterruptedPuts();
  return store;
}
