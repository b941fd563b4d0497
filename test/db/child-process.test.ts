import assert from 'node:assert/strict';
import { test } from 'node:test';
import { profilingFlags } from '../../src/db/child-process.js';

test("a child is given the service's CPU profiling flags with their values, however they were written", () => {
  const cases: [string[], string[]][] = [
    [[], []],
    [['--initial-old-space-size=96', '--single-threaded-gc'], []],
    [['--cpu-prof'], ['--cpu-prof']],
    [
      ['--cpu-prof', '--cpu-prof-dir=/tmp/p', '--cpu-prof-interval=250'],
      ['--cpu-prof', '--cpu-prof-dir=/tmp/p', '--cpu-prof-interval=250'],
    ],
    [
      ['--cpu-prof', '--cpu-prof-interval', '500', '--single-threaded-gc'],
      ['--cpu-prof', '--cpu-prof-interval', '500'],
    ],
    [
      ['--cpu-prof-dir', '/tmp/p', '--cpu-prof', '--import', 'tsx'],
      ['--cpu-prof-dir', '/tmp/p', '--cpu-prof'],
    ],
  ];
  for (const [execArgv, expected] of cases) assert.deepEqual(profilingFlags(execArgv), expected, execArgv.join(' '));
});
