import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ifNoneMatchHits, parseHttpDate } from '../../src/http/conditional.js';

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

test('an HTTP-date is read in each of its three forms, and nothing else is a date', () => {
  const sunday = Date.UTC(1994, 10, 6, 8, 49, 37);
  const cases: [text: string, time: number | undefined][] = [
    ['Sun, 06 Nov 1994 08:49:37 GMT', sunday],
    ['Sunday, 06-Nov-94 08:49:37 GMT', sunday],
    ['Sun Nov  6 08:49:37 1994', sunday],
    ['Thu, 01 Jan 1970 00:00:00 GMT', 0],
    ['Fri, 31 Dec 9999 23:59:59 GMT', Date.UTC(9999, 11, 31, 23, 59, 59)],
    ['2099', undefined],
    ['garbage 2099', undefined],
    ['', undefined],
    ['Sun, 06 Nov 1994 08:49:37', undefined],
    ['Sun, 06 Nov 1994 08:49:37 UTC', undefined],
    ['sun, 06 nov 1994 08:49:37 GMT', undefined],
    ['Sun, 6 Nov 1994 08:49:37 GMT', undefined],
    ['1994-11-06T08:49:37Z', undefined],
    ['Mon, 31 Feb 2026 00:00:00 GMT', undefined],
    ['Sun, 06 Nov 1994 24:00:00 GMT', undefined],
    ['Sun, 06 Nov 1994 23:60:00 GMT', undefined],
  ];
  for (const [text, time] of cases) assert.equal(parseHttpDate(text), time, text);
});
