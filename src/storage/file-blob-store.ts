import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, ByteRange } from './blob-store.js';
import { safeBlobPath } from './safe-path.js';

/**
 * Blobs as files under `<dataDir>/blobs`. A put streams into `<dataDir>/tmp` (the same file
 * system), flushes the file to disk, renames it into place and flushes the folder, so that a
 * crash leaves either the whole blob or none of it.
 */
export class FileBlobStore implements BlobStore {
  private readonly blobsDir: string;
  private readonly tmpDir: string;

  constructor(dataDir: string) {
    this.blobsDir = path.join(dataDir, 'blobs');
    this.tmpDir = path.join(dataDir, 'tmp');
    fs.mkdirSync(this.blobsDir, { recursive: true });
    fs.mkdirSync(this.tmpDir, { recursive: true });
  }

  async put(key: string, source: Readable): Promise<void> {
    const target = safeBlobPath(this.blobsDir, key);
    const temporary = path.join(this.tmpDir, `${randomBytes(12).toString('hex')}.part`);
    try {
      const file = fs.createWriteStream(temporary, { flags: 'wx' });
      // pipeline() settles as soon as the source fails, while the write stream may still be
      // opening its file on the thread pool (or writing to it): removing the temporary then
      // would come before the open creates it, and leave it behind. The stream closes only
      // once its open (and any write) is over, so the removal below waits for that.
      await pipeline(source, file).finally(() => closed(file));
      await syncFile(temporary);
      await fsp.mkdir(path.dirname(target), { recursive: true });
      await fsp.rename(temporary, target);
      await syncDirectory(path.dirname(target));
    } catch (error) {
      await fsp.rm(temporary, { force: true });
      throw error;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable | undefined> {
    const file = safeBlobPath(this.blobsDir, key);
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    // Open, the file reads to its end even when it is removed meanwhile.
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    try {
      const stats = await fsp.stat(safeBlobPath(this.blobsDir, key));
      return { size: stats.size };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(safeBlobPath(this.blobsDir, key), { force: true });
  }

  async check(): Promise<void> {
    await fsp.access(this.blobsDir, fs.constants.R_OK | fs.constants.W_OK);
    await fsp.access(this.tmpDir, fs.constants.R_OK | fs.constants.W_OK);
  }

  async close(): Promise<void> {}

  /** Removes temporary files of puts that a crash interrupted; run at start, before serving. */
  async removeInterruptedPuts(): Promise<number> {
    const names = await fsp.readdir(this.tmpDir);
    await Promise.all(names.map((name) => fsp.rm(path.join(this.tmpDir, name), { force: true })));
    return names.length;
  }
}

/** Resolves once the stream has closed its file, or at once if it has; a stream pipeline() ended always closes. */
function closed(stream: fs.WriteStream): Promise<void> {
  return stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once('close', () => resolve()));
}

/** fsync: the file's (or folder entry's) bytes are on disk, whichever descriptor wrote them. */
async function syncFile(file: string): Promise<void> {
  const handle = await fsp.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const syncDirectory = syncFile;
