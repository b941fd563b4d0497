import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import type { BlobStore, ByteRange } from './blob-store.js';
import { checkBlobKey } from './safe-path.js';

export interface S3Options {
  bucket: string;
  endpoint: string | undefined;
  region: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  forcePathStyle: boolean;
}

/**
 * Blobs as objects in an S3 bucket. A put is a streamed multipart upload: S3 shows the object
 * only once the upload completes, so a crash leaves the whole object or none (an abandoned
 * multipart upload is invisible; a lifecycle rule on the bucket reclaims its parts).
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3Options) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.accessKeyId && options.secretAccessKey ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } : undefined,
      // Checksums beyond what S3 requires break S3-compatible stores that do not know them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, source: Readable): Promise<void> {
    // Parts of 8 MiB, two in flight: the memory an upload holds stays near 16 MiB whatever its size.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: checkBlobKey(key), Body: source },
      partSize: 8 * 1024 * 1024,
      queueSize: 2,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  async read(key: string, range?: ByteRange): Promise<Readable | undefined> {
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: checkBlobKey(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      return response.Body as Readable;
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    try {
      const response = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: checkBlobKey(key) }));
      return { size: response.ContentLength ?? 0 };
    } catch (error) {
      if ((error as { name?: string }).name === 'NotFound') return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkBlobKey(key) }));
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
