import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactUrl } from '../../src/cli/storage.js';

test('a database URL is printed without its password, wherever the URL gives it', () => {
  const cases: [url: string, printed: string][] = [
    ['postgres://acds:s3cret@db.internal:5432/acds', 'postgres://acds:***@db.internal:5432/acds'],
    ['postgres://acds@db.internal:5432/acds?password=s3cret', 'postgres://acds@db.internal:5432/acds?password=***'],
    ['postgres://db/acds?sslmode=require&sslpassword=k3y&PASSWORD=x', 'postgres://db/acds?sslmode=require&sslpassword=***&PASSWORD=***'],
    ['postgres://acds@db.internal/acds?application_name=acds', 'postgres://acds@db.internal/acds?application_name=acds'],
    ['not a url', '(unparsable URL)'],
  ];
  for (const [url, printed] of cases) assert.equal(redactUrl(url), printed, url);
});
