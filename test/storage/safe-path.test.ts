import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { safeBlobPath } from '../../src/storage/safe-path.js';

/** The guard between a blob key and the file system: nothing outside the root can be named. */

describe('blob key to file path', () => {
  const root = '/data/blobs';
  for (const key of ['1/abc', '12/0123456789abcdef', 'a_b-c/D']) {
    test(`"${key}" maps below the root`, () => assert.equal(safeBlobPath(root, key), path.join(root, key)));
  }
  const hostile = ['..', '../etc/passwd', '1/../../x', '/etc/passwd', '1//x', '1/', '', 'a\0b', 'a\\b', 'a%2fb', '1/./x', 'x'.repeat(513)];
  for (const key of hostile) {
    test(`${JSON.stringify(key.length > 40 ? `${key.slice(0, 10)}…` : key)} is refused`, () => {
      assert.throws(() => safeBlobPath(root, key), /invalid blob key|escapes its root/);
    });
  }
});
