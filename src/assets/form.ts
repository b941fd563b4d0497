import { pipeline, Transform, type Readable } from 'node:stream';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError, badRequest } from '../errors.js';
import { FORM_FIELDS, FORM_FILE_FIELD } from './schema.js';
import { checkFieldName, type AssetForm, type AssetService } from './service.js';

export interface FormLimits {
  maxUploadBytes: number;
  maxContentBytes: number;
}

/** The most bytes of any text field but `content`: far above the longest valid url, name or folder. */
export const TEXT_FIELD_BYTES = 8 * 1024;

/**
 * What a form may carry beyond its file (or `content`): the other fields, at most
 * TEXT_FIELD_BYTES each, and the headers of its parts. A body longer than the upload limit by
 * more than this cannot be a valid form.
 */
export const FORM_OVERHEAD_BYTES = 1024 * 1024;

/**
 * A valid form has at most one part per field, and the reader refuses a repeated or unknown part
 * as it comes; busboy stops a little past that all the same, as a backstop.
 */
const MAX_PARTS = FORM_FIELDS.length + 2;

/**
 * Reads an asset's multipart form in the order the client sent it, as a stream: each part is
 * judged by its name before any of its bytes are read, text fields are read into a map up to
 * their limit, and the `file` part is streamed straight into the blob store. The first part
 * that is refused ends the reading there; the rest of the body is never read (the answer closes
 * the connection). Fields may come after the file, so the form as a whole is judged by the
 * service once it is read. On any failure the staged bytes are discarded and the error is a 400
 * that says what to fix.
 */
export async function readAssetForm(
  request: FastifyRequest,
  assets: AssetService,
  accountId: number,
  limits: FormLimits,
  operation: 'create' | 'update',
): Promise<AssetForm> {
  if (!request.isMultipart()) throw badRequest('send the form as multipart/form-data');
  refuseDeclaredOversize(request, limits);
  const form: AssetForm = { fields: new Map() };
  try {
    for await (const part of request.parts(streamEveryPart(limits)) as AsyncIterable<MultipartFile>) {
      checkPartName(part, form, operation);
      if (isUpload(part)) form.file = { ...(await assets.stage(accountId, withinUploadLimit(part.file, limits))), filename: part.filename };
      else form.fields.set(part.fieldname, await readText(part, limits));
    }
  } catch (error) {
    if (form.file) await assets.discard(form.file.key);
    throw asFormError(error, limits);
  }
  return form;
}

/**
 * Every part, text fields included, comes as a stream (busboy would otherwise read a text field
 * whole into memory, up to its size limit, before telling its name), so a part can be refused
 * by its name alone, and a text field's bytes are counted as they arrive. Busboy pauses the body
 * while a part's stream is not read.
 */
function streamEveryPart(limits: FormLimits) {
  return {
    isPartAFile: () => true,
    // One byte over the limit reaches withinUploadLimit, which refuses it.
    limits: { fileSize: limits.maxUploadBytes + 1, files: MAX_PARTS, parts: MAX_PARTS },
  };
}

/** A body whose declared length no valid form can have is refused before any of it is read. */
function refuseDeclaredOversize(request: FastifyRequest, limits: FormLimits): void {
  const declared = Number(request.headers['content-length']);
  if (declared > limits.maxUploadBytes + FORM_OVERHEAD_BYTES) throw uploadTooLarge(limits);
}

/** A part's name is judged from its headers, before its bytes. */
function checkPartName(part: MultipartFile, form: AssetForm, operation: 'create' | 'update'): void {
  const name = part.fieldname;
  if (isUpload(part)) {
    if (name !== FORM_FILE_FIELD) throw badRequest(`${name} is not a file field; upload the file as "${FORM_FILE_FIELD}"`);
    if (form.file) throw badRequest('upload one file at most');
    return;
  }
  if (name === FORM_FILE_FIELD) throw badRequest(`${FORM_FILE_FIELD} must be an uploaded file, sent with a filename`);
  checkFieldName(name, operation);
  if (form.fields.has(name)) throw badRequest(`${name} is given more than once`);
}

/** What busboy would have taken for a file: a part with a filename, or of type application/octet-stream. */
function isUpload(part: MultipartFile): boolean {
  return part.filename !== undefined || part.mimetype === 'application/octet-stream';
}

// Bytes that are not UTF-8 are refused, not replaced by U+FFFD (three bytes each, past the limit
// they were counted against); a byte order mark is kept, as the bytes were sent.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A text field, read up to its limit; one byte more ends the reading with a 400. Text is UTF-8. */
async function readText(part: MultipartFile, limits: FormLimits): Promise<string> {
  const name = part.fieldname;
  const limit = name === 'content' ? limits.maxContentBytes : TEXT_FIELD_BYTES;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of part.file as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      throw badRequest(
        name === 'content' ? `content is larger than ${limit} bytes; upload it as a file instead` : `${name} is too long: at most ${limit} bytes`,
      );
    }
    chunks.push(chunk);
  }
  try {
    return UTF8.decode(Buffer.concat(chunks));
  } catch {
    throw badRequest(name === 'content' ? 'content must be UTF-8 text; upload other bytes as a file' : `${name} must be UTF-8 text`);
  }
}

/** The file's bytes, failing the moment they pass the upload limit rather than once all have been read. */
function withinUploadLimit(file: Readable, limits: FormLimits): Readable {
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > limits.maxUploadBytes) callback(uploadTooLarge(limits));
      else callback(null, chunk);
    },
  });
  return pipeline(file, counter, () => {});
}

function uploadTooLarge(limits: FormLimits): AppError {
  return badRequest(`the file is larger than the limit of ${limits.maxUploadBytes} bytes`);
}

/** @fastify/multipart's own errors (413s among them) become 400s, as every failed asset write is. */
function asFormError(error: unknown, limits: FormLimits): unknown {
  if (error instanceof AppError) return error;
  switch ((error as { code?: string }).code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return uploadTooLarge(limits);
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return badRequest('the form has too many fields');
    case 'FST_PROTO_VIOLATION':
      return badRequest('the form has a forbidden field name');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return badRequest('send the form as multipart/form-data');
  }
  if ((error as { statusCode?: number }).statusCode === 400 || /multipart|Part terminated|Unexpected end/i.test(String((error as Error).message))) {
    return badRequest('the multipart form is malformed or was cut short');
  }
  return error;
}
