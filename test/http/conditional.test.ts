import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ifNoneMatchHits } from '../../src/http/conditional.js';

test('If-None-Match names a tag: weak comparison, lists, and *', () => {
  const cases: [header: string | undefined, hits: boolean][] = [
    [undefined, false],
    ['"abc"', true],
    ['W/"abc"', true],
    [' "x" ,  "abc" ', true],
    ['*', true],
    ['"abcd"', false],
    ['abc', false],
    ['"ABC"', false],
    ['', false],
  ];
  for (const [header, hits] of cases) assert.equal(ifNoneMatchHits(header, '"abc"'), hits, `If-None-Match: ${header}`);
});
