import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ImportProgress } from '../../src/conversions/import.js';
import { formatCount } from '../../src/conversions/import.js';
import { ignoredIdsWarning, ProblemReport, ProgressReport, type ProgressReportOptions } from '../../src/conversions/import-report.js';

/** What the command line prints about an import: its problems, its warning and its progress, as pure functions of what the import reports. */

const CURRENCY = 'currency must be three upper-case letters such as USD';
const COUNTRY = 'country must be two upper-case letters such as US';

/** The lines a report prints for these problems, then its summary. */
function reportOf(reasons: string[]): string[] {
  const printed: string[] = [];
  const report = new ProblemReport((line) => printed.push(line));
  for (const [index, reason] of reasons.entries()) report.add({ line: index + 1, reason });
  report.end();
  return printed;
}

const PROBLEM_CASES: { says: string; reasons: string[]; prints: string[] }[] = [
  {
    says: 'a few problems are each printed with their line, and nothing more',
    reasons: [CURRENCY, COUNTRY],
    prints: [`line 1: ${CURRENCY}`, `line 2: ${COUNTRY}`],
  },
  {
    says: 'twenty problems are all printed',
    reasons: Array(20).fill(CURRENCY),
    prints: Array.from({ length: 20 }, (_, index) => `line ${index + 1}: ${CURRENCY}`),
  },
  {
    says: 'after twenty, the rest are counted by reason, the most frequent first, the counts aligned',
    reasons: [...Array(20).fill(COUNTRY), ...Array.from({ length: 9_980 }, (_, index) => (index % 10 === 0 ? COUNTRY : CURRENCY))],
    prints: [
      ...Array.from({ length: 20 }, (_, index) => `line ${index + 1}: ${COUNTRY}`),
      '... and 9,980 more problems:',
      `  8,982 × ${CURRENCY}`,
      `    998 × ${COUNTRY}`,
    ],
  },
  {
    says: 'one more problem is counted in the singular',
    reasons: Array(21).fill(CURRENCY),
    prints: [...Array.from({ length: 20 }, (_, index) => `line ${index + 1}: ${CURRENCY}`), '... and 1 more problem:', `  1 × ${CURRENCY}`],
  },
  {
    // A new unknown field on every line: the counts stay bounded, and every problem is counted.
    says: 'past ten reasons, the rest are summed up in one line, however many distinct reasons there are',
    reasons: [...Array(20).fill(CURRENCY), ...Array(50).fill(COUNTRY), ...Array.from({ length: 5_000 }, (_, index) => `unknown field f${index}`)],
    prints: [
      ...Array.from({ length: 20 }, (_, index) => `line ${index + 1}: ${CURRENCY}`),
      '... and 5,050 more problems:',
      `     50 × ${COUNTRY}`,
      ...Array.from({ length: 9 }, (_, index) => `      1 × unknown field f${index}`),
      '  4,991 × other reasons',
    ],
  },
];

for (const { says, reasons, prints } of PROBLEM_CASES) {
  test(`problems: ${says}`, () => {
    assert.deepEqual(reportOf(reasons), prints);
  });
}

test('the warning about ignored ids counts the rows, and there is none when no row had an id', () => {
  assert.equal(ignoredIdsWarning(0), undefined);
  assert.equal(ignoredIdsWarning(1), 'warning: the id field of 1 row was ignored: acds gives each imported conversion its own id');
  assert.equal(ignoredIdsWarning(1_234), 'warning: the id field of 1,234 rows was ignored: acds gives each imported conversion its own id');
  assert.equal(formatCount(1_000_000), '1,000,000');
});

/** The lines a progress report prints for these updates, each at its time in milliseconds from the report's start. */
function progressOf(updates: [number, ImportProgress][], options: Omit<ProgressReportOptions, 'print' | 'now'> = {}): string[] {
  const printed: string[] = [];
  let now = 0;
  const report = new ProgressReport({ ...options, print: (line) => printed.push(line), now: () => now });
  for (const [at, progress] of updates) {
    now = at;
    report.update(progress);
  }
  return printed;
}

const reading = (rows: number): ImportProgress => ({ phase: 'reading', rows });
const committing: ImportProgress = { phase: 'committing' };

const PROGRESS_CASES: { says: string; updates: [number, ImportProgress][]; options?: Omit<ProgressReportOptions, 'print' | 'now'>; prints: string[] }[] = [
  {
    says: 'an import done within two seconds prints nothing',
    updates: [
      [0, reading(0)],
      [900, reading(1_000)],
      [1_500, reading(2_000)],
      [1_999, committing],
    ],
    prints: [],
  },
  {
    says: 'after two seconds, a line as each phase starts and every five seconds within one',
    updates: [
      [0, reading(0)],
      [1_000, reading(1_000)],
      [2_000, reading(2_000)],
      [4_000, reading(3_000)],
      [6_999, reading(4_000)],
      [7_000, reading(5_000)],
      [13_200, committing],
    ],
    prints: ['reading: 2,000 rows', 'reading: 5,000 rows', 'committing'],
  },
  {
    says: 'a file of known size is read by percentage, rounded down, never 100% before its end',
    updates: [
      [2_000, reading(1_000)],
      [7_000, reading(2_000)],
      [12_000, reading(2_999)],
      [17_000, reading(3_000)],
    ],
    options: { fractionRead: (rows) => rows / 3_000 },
    prints: ['reading: 33% (1,000 rows)', 'reading: 66% (2,000 rows)', 'reading: 99% (2,999 rows)', 'reading: 100% (3,000 rows)'],
  },
  {
    says: 'the seed generates its rows, by the percentage of those asked for',
    updates: [
      [3_000, reading(250)],
      [3_500, committing],
    ],
    options: { reading: 'generating', fractionRead: (rows) => rows / 1_000 },
    prints: ['generating: 25% (250 rows)', 'committing'],
  },
];

for (const { says, updates, options, prints } of PROGRESS_CASES) {
  test(`progress: ${says}`, () => {
    assert.deepEqual(progressOf(updates, options), prints);
  });
}
