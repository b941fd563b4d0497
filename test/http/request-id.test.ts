import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestIdOf } from '../../src/http/request-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('a request id the client sends is kept when it looks like an id, and replaced by a new UUID otherwise', () => {
  const kept = [
    '0f8fad5b-d9cb-469f-a165-70867728950e',
    'req_4f2a.1',
    '4bf92f3577b34da6a3ce929d0e0e4736',
    'Root=1-5759e988-bd862e3fe1be46a994272793',
    'a',
    'x'.repeat(128),
  ];
  for (const sent of kept) assert.equal(requestIdOf({ 'x-request-id': sent }), sent, sent);
  const replaced: (string | undefined)[] = [undefined, '', 'x'.repeat(129), 'two words', 'line\nbreak', '-leading-dash', 'ünïcode', '<script>', 'a;b', 'a,b'];
  for (const sent of replaced) assert.match(requestIdOf({ 'x-request-id': sent }), UUID, String(sent));
  assert.notEqual(requestIdOf({}), requestIdOf({}), 'each new id is new');
});
