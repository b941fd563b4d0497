import assert from 'node:assert/strict';
import { test } from 'node:test';
import { urlForLog } from '../../src/http/request-log.js';

test("a logged URL shows as much of a cart receiver's token as its listing does, and not its query string", () => {
  const token = 'iOCCbJq3Zx8LwUIfFLwUIaaaaaaaaaaaaaaaaaaaaaa';
  const cases: [url: string, logged: string][] = [
    [`/hooks/buygoods/${token}`, '/hooks/buygoods/iOCCbJ…'],
    [`/hooks/konnektive/${token}?event=sale&email=buyer%40example.com`, '/hooks/konnektive/iOCCbJ…?…'],
    [`/hooks/generic/${token}/extra?x=1`, '/hooks/generic/iOCCbJ…/extra?…'],
    [`/hooks/clickbank/${token}?`, '/hooks/clickbank/iOCCbJ…?…'],
    ['/hooks/digistore/abc', '/hooks/digistore/abc…'],
    ['/api/v1/conversions?utm_source=google', '/api/v1/conversions?utm_source=google'],
    ['/hooks', '/hooks'],
    [`/${'x'.repeat(300)}`, `/${'x'.repeat(199)}... (301 characters)`],
  ];
  for (const [url, logged] of cases) assert.equal(urlForLog(url), logged, url);
  assert.ok(!urlForLog(`/hooks/buygoods/${token}`).includes(token.slice(0, 7)), 'the token beyond its shown characters is not in the log');
});
