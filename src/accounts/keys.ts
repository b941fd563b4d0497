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

// A key this service made: the tag, then 192 random bits in base64url.
const GENERATED_KEY = /^acds_[A-Za-z0-9_-]{32}$/;
/**
 * How much of a key acds did not make (an operator's BOOTSTRAP_API_KEY, which may be as short as
 * 20 characters) is kept in clear: enough to tell it in a list, too little to shorten a search for
 * the rest.
 */
const SHOWN_CHARACTERS_OF_OTHER_KEYS = 4;

/** The part of a key kept in clear, to list and revoke it by. */
export function keyPrefix(key: string): string {
  return key.slice(0, GENERATED_KEY.test(key) ? SHOWN_PREFIX_LENGTH : SHOWN_CHARACTERS_OF_OTHER_KEYS);
}

/** A public, non-secret handle for an account, used in public asset URLs. */
export function generateHandle(): string {
  return randomBytes(8).toString('hex');
}
