import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * Passes bytes through while counting them, hashing them (for the ETag) and keeping the first
 * `headBytes` of them (for sniffing the type and reading image dimensions), so that an upload
 * is inspected without ever being held whole in memory.
 */
export class MeasuringStream extends Transform {
  size = 0;
  private readonly hash = createHash('sha256');
  private readonly headChunks: Buffer[] = [];
  private headLength = 0;

  constructor(private readonly headBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    this.hash.update(chunk);
    if (this.headLength < this.headBytes) {
      const part = chunk.subarray(0, this.headBytes - this.headLength);
      this.headChunks.push(Buffer.from(part));
      this.headLength += part.length;
    }
    callback(null, chunk);
  }

  get head(): Buffer {
    return Buffer.concat(this.headChunks);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
