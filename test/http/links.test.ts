import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pageLinks } from '../../src/http/links.js';

test("a list page's Link header names the first, previous, next and last pages, changing only page", () => {
  const cases: [url: string, page: number, totalPages: number, links: string | undefined][] = [
    ['/api/v1/conversions', 1, 0, undefined],
    ['/api/v1/conversions', 1, 1, '</api/v1/conversions?page=1>; rel="first", </api/v1/conversions?page=1>; rel="last"'],
    [
      '/api/v1/conversions?utm_source=facebook',
      1,
      3,
      '</api/v1/conversions?utm_source=facebook&page=1>; rel="first", </api/v1/conversions?utm_source=facebook&page=2>; rel="next", </api/v1/conversions?utm_source=facebook&page=3>; rel="last"',
    ],
    [
      '/api/v1/assets?page=2&folder=img%2F2026&image=t',
      2,
      3,
      '</api/v1/assets?page=1&folder=img%2F2026&image=t>; rel="first", </api/v1/assets?page=1&folder=img%2F2026&image=t>; rel="prev", </api/v1/assets?page=3&folder=img%2F2026&image=t>; rel="next", </api/v1/assets?page=3&folder=img%2F2026&image=t>; rel="last"',
    ],
    // A value holding a question mark is kept whole.
    [
      '/api/v1/conversions?referrer_name=who?me',
      1,
      2,
      '</api/v1/conversions?referrer_name=who%3Fme&page=1>; rel="first", </api/v1/conversions?referrer_name=who%3Fme&page=2>; rel="next", </api/v1/conversions?referrer_name=who%3Fme&page=2>; rel="last"',
    ],
    // Past the end: back to the last page, nothing after it.
    [
      '/api/v1/cart-events?page=9',
      9,
      3,
      '</api/v1/cart-events?page=1>; rel="first", </api/v1/cart-events?page=3>; rel="prev", </api/v1/cart-events?page=3>; rel="last"',
    ],
    [
      '/api/v1/conversions?cart_integration.in=clickbank,digistore&page=3',
      3,
      3,
      '</api/v1/conversions?cart_integration.in=clickbank%2Cdigistore&page=1>; rel="first", </api/v1/conversions?cart_integration.in=clickbank%2Cdigistore&page=2>; rel="prev", </api/v1/conversions?cart_integration.in=clickbank%2Cdigistore&page=3>; rel="last"',
    ],
  ];
  for (const [url, page, totalPages, links] of cases) assert.equal(pageLinks(url, page, totalPages), links, `${url} page ${page} of ${totalPages}`);
});
