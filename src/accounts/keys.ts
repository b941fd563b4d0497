import { createHash, randomBytes } from 'node:crypto';

const KEY_PREFIX = 'acds_';
/** How much of a key is kept in clear, to list and revoke it by: the tag and 8 random characters. */
export const SHOWN_PREFIX_LENGTH = KEY_PREFIX.length + 8;

/** A new key: 192 random bits, URL-safe. Shown once; only its hash is stored. */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(24).toString('base64url');
}

/**
 * Keys are 192 random bits, so a fast hash is enough: a slow password hash buys nothing against
 * guessing them and would rule out finding a key by its hash through an index.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function keyPrefix(key: string): string {
  return key.slice(0, SHOWN_PREFIX_LENGTH);
}

/** A public, non-secret handle for an account, used in public asset URLs. */
export function generateHandle(): string {
  return randomBytes(8).toString('hex');
}
