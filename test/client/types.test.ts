import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { clientTypes, TYPES_FILE } from './update-types.js';

test("the client's generated types are those of the service's OpenAPI document now", async () => {
  const committed = fs.readFileSync(TYPES_FILE, 'utf8');
  assert.ok(committed === (await clientTypes()), 'client/src/openapi.ts is out of date: run `npm run client:types` and commit it');
});
