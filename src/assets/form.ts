import type { Readable } from 'node:stream';
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError, badRequest } from '../errors.js';
import type { AssetForm, AssetService } from './service.js';

export interface FormLimits {
  maxUploadBytes: number;
  maxContentBytes: number;
}

/**
 * Reads an asset's multipart form in the order the client sent it: text fields into a map,
 * the `file` part streamed straight into the blob store (never held in memory). Fields may come
 * after the file, so the form is judged by the service once it is whole. On any failure the
 * staged bytes are discarded and the error is a 400 that says what to fix.
 */
export async function readAssetForm(request: FastifyRequest, assets: AssetService, accountId: number, limits: FormLimits): Promise<AssetForm> {
  if (!request.isMultipart()) throw badRequest('send the form as multipart/form-data');
  const form: AssetForm = { fields: new Map() };
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          await drain(part.file);
          throw badRequest(`${part.fieldname} is not a file field; upload the file as "file"`);
        }
        form.file = { ...(await assets.stage(accountId, part.file)), filename: part.filename };
        if (part.file.truncated) throw fileTooLarge(limits);
      } else {
        if (form.fields.has(part.fieldname)) throw badRequest(`${part.fieldname} is given more than once`);
        if (part.valueTruncated) {
          throw badRequest(
            part.fieldname === 'content'
              ? `content is larger than ${limits.maxContentBytes} bytes; upload it as a file instead`
              : `${part.fieldname} is too long`,
          );
        }
        form.fields.set(part.fieldname, String(part.value));
      }
    }
  } catch (error) {
    if (form.file) await assets.discard(form.file.key);
    throw asFormError(error, limits);
  }
  return form;
}

function fileTooLarge(limits: FormLimits): AppError {
  return badRequest(`the file is larger than the limit of ${limits.maxUploadBytes} bytes`);
}

/** @fastify/multipart's own errors (413s among them) become the interface's 400s. */
function asFormError(error: unknown, limits: FormLimits): unknown {
  if (error instanceof AppError) return error;
  switch ((error as { code?: string }).code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return fileTooLarge(limits);
    case 'FST_FILES_LIMIT':
      return badRequest('upload one file at most');
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

async function drain(stream: Readable): Promise<void> {
  for await (const _chunk of stream) {
    // discard
  }
}
