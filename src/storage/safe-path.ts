import path from 'node:path';

/** Blob keys are segments of letters, digits, `-` and `_`, joined by `/`: nothing else reaches a path. */
const KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/;

/** `key` itself, or an error when it is not a well-formed blob key. */
export function checkBlobKey(key: string): string {
  if (key.length > 512 || !KEY.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  return key;
}

/**
 * The file path of `key` below `root`, or an error when the key could name anything outside it
 * (`..`, absolute paths, empty segments, NUL bytes, backslashes, encoded separators).
 */
export function safeBlobPath(root: string, key: string): string {
  checkBlobKey(key);
  const resolvedRoot = path.resolve(root);
  const full = path.resolve(resolvedRoot, key);
  if (!full.startsWith(resolvedRoot + path.sep)) throw new Error(`blob key ${JSON.stringify(key)} escapes its root`);
  return full;
}
