import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { missingNodeFlags, SERVICE_NODE_FLAGS } from '../../src/cli/node-flags.js';

// What starts the service for a user: npm start and the image's command.
const packageJson = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
const dockerfile = fs.readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');

test('npm start runs the service with its node flags', () => {
  const command = packageJson.scripts.start!.split('&&').at(-1)!.trim().split(/\s+/);
  assert.deepEqual(command, ['node', ...SERVICE_NODE_FLAGS, 'dist/cli.js', 'serve']);
});

test("the image's command runs the service with its node flags", () => {
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
  assert.ok(cmd, 'the Dockerfile has a CMD in exec form');
  assert.deepEqual(JSON.parse(cmd), ['node', ...SERVICE_NODE_FLAGS, 'dist/cli.js', 'serve']);
});

test('missingNodeFlags names the flags a process was started without', () => {
  assert.deepEqual(missingNodeFlags([]), SERVICE_NODE_FLAGS);
  assert.deepEqual(missingNodeFlags(['--import', 'tsx', ...SERVICE_NODE_FLAGS]), []);
  assert.deepEqual(missingNodeFlags(['--initial-old-space-size=64']), SERVICE_NODE_FLAGS);
  assert.deepEqual(missingNodeFlags(['--single-threaded-gc']), ['--initial-old-space-size=96']);
});
