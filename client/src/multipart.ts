import { chunksOf } from './streams.js';

/**
 * An asset's form as multipart/form-data: a FormData when the file is in memory (a Blob, bytes,
 * or a file path, opened as a Blob that reads from disk), else written by hand around the stream,
 * so that a stream is sent as it is read and never held in memory whole.
 */

/** An asset's file: a Blob (a browser's File), bytes, a stream of bytes, or, in Node, a path to a file. */
export type FileInput = Blob | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | string;

/** A request body, made afresh for each attempt. */
export interface FormBody {
  body: BodyInit;
  headers?: Record<string, string>;
  /** A stream: sent once, never again. */
  stream: boolean;
}

/** The form of `fields` (text) and an optional file, with its name. */
export async function formOf(
  fields: Record<string, string>,
  file: FileInput | undefined,
  fileName: string | undefined,
): Promise<{ body: () => FormBody; replayable: boolean }> {
  if (file === undefined || file instanceof Blob || file instanceof Uint8Array || typeof file === 'string') {
    const blob = typeof file === 'string' ? await openAsBlob(file) : file instanceof Uint8Array ? new Blob([file as BlobPart]) : file;
    const name = fileName ?? (typeof file === 'string' ? baseName(file) : blob instanceof File ? blob.name : 'upload');
    const body = () => {
      const form = new FormData();
      for (const [field, value] of Object.entries(fields)) form.append(field, value);
      if (blob) form.append('file', blob, name);
      return { body: form, stream: false };
    };
    return { body, replayable: true };
  }
  const boundary = `acds-${crypto.randomUUID()}`;
  const stream = streamedForm(boundary, fields, file, fileName ?? 'upload');
  const body = () => ({ body: stream, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, stream: true });
  return { body, replayable: false };
}

function streamedForm(
  boundary: string,
  fields: Record<string, string>,
  file: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  fileName: string,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  async function* parts(): AsyncGenerator<Uint8Array> {
    for (const [field, value] of Object.entries(fields)) {
      yield encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(field)}"\r\n\r\n${value}\r\n`);
    }
    yield encoder.encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(fileName)}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    yield* bytesOf(file);
    yield encoder.encode(`\r\n--${boundary}--\r\n`);
  }
  const iterator = parts();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await iterator.return(undefined);
    },
  });
}

async function* bytesOf(file: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (!(Symbol.asyncIterator in file)) return yield* chunksOf(file);
  // A Node stream of text gives strings.
  for await (const chunk of file as AsyncIterable<Uint8Array | string>) yield typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
}

/** A name inside a quoted header parameter, escaped as browsers do. */
function quoted(name: string): string {
  return name.replaceAll('"', '%22').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

function baseName(path: string): string {
  return path.split(/[\\/]/).pop() || 'upload';
}

/** A file on disk as a Blob that reads it when sent (Node 20: fs.openAsBlob). */
async function openAsBlob(path: string): Promise<Blob> {
  // Named at run time (and marked for Vite, which would otherwise follow the constant), so that
  // bundlers for browsers leave Node's module alone.
  const fsModule = 'node:fs';
  const fs = (await import(/* @vite-ignore */ fsModule)) as { openAsBlob?: (path: string) => Promise<Blob> };
  if (!fs.openAsBlob) throw new TypeError('a file path needs Node 20 or later; in a browser, pass a File');
  return fs.openAsBlob(path);
}
