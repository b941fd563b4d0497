import { badRequest } from '../errors.js';
import type { TypeFlag, TypeFlags } from './schema.js';

/** Pure rules about what an asset may be called, where it may live, and what it is. */

export const MAX_NAME_LENGTH = 255;
// Folders in bytes of UTF-8 and addresses in ASCII: each goes into an index entry, which
// PostgreSQL limits to 2,704 bytes (with a name of 255 characters, at most 765 bytes).
export const MAX_FOLDER_BYTES = 1024;
export const MAX_URL_LENGTH = 2048;
export const MAX_DIMENSION = 1_000_000;

// Control characters: C0, DEL and C1.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Why `name` is not a valid asset or folder name, or undefined when it is. */
export function nameProblem(name: string): string | undefined {
  // Characters as a person counts them: an emoji is one, though two units of a JavaScript string.
  const characters = [...name].length;
  if (characters < 1 || characters > MAX_NAME_LENGTH) return `must be 1 to ${MAX_NAME_LENGTH} characters`;
  if (name.includes('/')) return 'must not contain /';
  if (CONTROL.test(name)) return 'must not contain control characters';
  if (name === '.' || name === '..') return 'must not be . or ..';
  return undefined;
}

export function checkName(name: string): string {
  const problem = nameProblem(name);
  if (problem) throw badRequest(`name ${problem}`);
  return name;
}

/** A folder path: "" for the root, or valid names joined by "/", no leading or trailing "/". */
export function checkFolder(folder: string): string {
  if (folder === '') return folder;
  if (Buffer.byteLength(folder) > MAX_FOLDER_BYTES) {
    throw badRequest(`folder must be at most ${MAX_FOLDER_BYTES} bytes of UTF-8 (a character outside ASCII takes 2 to 4)`);
  }
  for (const segment of folder.split('/')) {
    const problem = nameProblem(segment);
    if (problem) {
      throw badRequest(`folder "${folder}" is not a valid path: each of its /-separated names ${problem}, with no leading or trailing /`);
    }
  }
  return folder;
}

/**
 * The address as the URL standard writes it, which is what is stored: all ASCII (a host outside
 * ASCII in punycode, other characters percent-encoded), as a Location header must be.
 */
export function checkUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest('url must be an absolute http or https address');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw badRequest('url must be an absolute http or https address');
  if (parsed.href.length > MAX_URL_LENGTH) {
    throw badRequest(`url must be at most ${MAX_URL_LENGTH} characters as an address (a character outside ASCII counts percent-encoded, 3 to 12)`);
  }
  return parsed.href;
}

export function parseFormBoolean(field: string, value: string): boolean {
  if (value === 't' || value === 'true') return true;
  if (value === 'f' || value === 'false') return false;
  throw badRequest(`${field} must be t, f, true or false`);
}

export function parseDimension(field: string, value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1 || number > MAX_DIMENSION) {
    throw badRequest(`${field} must be a whole number of pixels from 1 to ${MAX_DIMENSION}`);
  }
  return number;
}

interface ExtensionType {
  flag: TypeFlag;
  contentType: string;
}

const BY_EXTENSION: Record<string, ExtensionType> = {
  png: { flag: 'image', contentType: 'image/png' },
  jpg: { flag: 'image', contentType: 'image/jpeg' },
  jpeg: { flag: 'image', contentType: 'image/jpeg' },
  gif: { flag: 'image', contentType: 'image/gif' },
  webp: { flag: 'image', contentType: 'image/webp' },
  avif: { flag: 'image', contentType: 'image/avif' },
  svg: { flag: 'image', contentType: 'image/svg+xml' },
  ico: { flag: 'image', contentType: 'image/x-icon' },
  bmp: { flag: 'image', contentType: 'image/bmp' },
  mp4: { flag: 'video', contentType: 'video/mp4' },
  webm: { flag: 'video', contentType: 'video/webm' },
  mov: { flag: 'video', contentType: 'video/quicktime' },
  m4v: { flag: 'video', contentType: 'video/x-m4v' },
  ogv: { flag: 'video', contentType: 'video/ogg' },
  js: { flag: 'script', contentType: 'text/javascript; charset=utf-8' },
  mjs: { flag: 'script', contentType: 'text/javascript; charset=utf-8' },
  css: { flag: 'style', contentType: 'text/css; charset=utf-8' },
  txt: { flag: 'text', contentType: 'text/plain; charset=utf-8' },
  html: { flag: 'text', contentType: 'text/html; charset=utf-8' },
  htm: { flag: 'text', contentType: 'text/html; charset=utf-8' },
  md: { flag: 'text', contentType: 'text/markdown; charset=utf-8' },
  json: { flag: 'text', contentType: 'application/json; charset=utf-8' },
  xml: { flag: 'text', contentType: 'application/xml; charset=utf-8' },
  csv: { flag: 'text', contentType: 'text/csv; charset=utf-8' },
};

export const NO_FLAGS: TypeFlags = { image: false, video: false, script: false, style: false, text: false };

function extensionOf(name: string): string | undefined {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : undefined;
}

export interface DetectedType {
  flags: TypeFlags;
  /** The content type to serve the bytes with; undefined for a remote asset. */
  contentType: string | undefined;
}

/**
 * What an asset is, from its name and, for local bytes, their sniffed binary type: the bytes
 * win over the name when they are a recognised image or video; text types come from the
 * name, because sniffing cannot tell them apart; `content` of no other type is text.
 */
export function detectType(name: string, bytes: { sniffedMime: string | undefined; fromContent: boolean } | undefined): DetectedType {
  const sniffed = bytes?.sniffedMime;
  if (sniffed?.startsWith('image/') || sniffed?.startsWith('video/')) {
    const flag: TypeFlag = sniffed.startsWith('image/') ? 'image' : 'video';
    return { flags: { ...NO_FLAGS, [flag]: true }, contentType: sniffed };
  }
  const byName = BY_EXTENSION[extensionOf(name) ?? ''];
  if (!bytes) return { flags: byName ? { ...NO_FLAGS, [byName.flag]: true } : NO_FLAGS, contentType: undefined };
  if (byName) return { flags: { ...NO_FLAGS, [byName.flag]: true }, contentType: byName.contentType };
  if (sniffed) return { flags: NO_FLAGS, contentType: sniffed };
  if (bytes.fromContent) return { flags: { ...NO_FLAGS, text: true }, contentType: 'text/plain; charset=utf-8' };
  return { flags: NO_FLAGS, contentType: 'application/octet-stream' };
}

/** Types a browser would run script in when the file is opened directly. */
export function needsSandbox(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'text/html' || type === 'image/svg+xml' || type === 'application/xhtml+xml' || type === 'text/xml' || type === 'application/xml';
}
