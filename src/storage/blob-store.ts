import type { Readable } from 'node:stream';

/** An inclusive byte range, as HTTP states it. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where asset bytes live, by key. Implementations (the local file system now, S3 later) make
 * `put` all-or-nothing: a key either holds the whole stream, durably, or nothing.
 */
export interface BlobStore {
  /** Stores the stream under `key`; resolves once the bytes are durable. */
  put(key: string, source: Readable): Promise<void>;
  /**
   * The bytes under `key`, or only `range` of them; undefined when there are none (removed since
   * the row naming them was read).
   */
  read(key: string, range?: ByteRange): Promise<Readable | undefined>;
  /** The size of the bytes under `key`, or undefined when there are none. */
  stat(key: string): Promise<{ size: number } | undefined>;
  /** Removes `key`; removing a key that is not there is not an error. */
  delete(key: string): Promise<void>;
  /** Resolves when the store can be read and written; for readiness. */
  check(): Promise<void>;
  /** Releases connections; the store is not used afterwards. */
  close(): Promise<void>;
}
