import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatCount, ignoredIdsWarning, ProblemReport } from '../../src/conversions/import-report.js';

/** What the command line prints about an import: its problems, its warning and its progress, as pure functions of what the import reports. */

const CURRENCY = 'currency must be three upper-case letters such as USD';
const COUNTRY = 'country must be two upper-case letters such as US';

/** The lines a report prints for these problems, then its summary. */
function reportOf(reasons: string[]): string[] {
  const printed: string[] = [];
  const report = new ProblemReport((line) => printed.push(line));
  reasons.forEach((reason, index) => report.add({ line: index + 1, reason }));
  report.end();
  return printed;
}

const PROBLEM_CASES: { says: string; reasons: string[]; prints: string[] }[] = [
  { says: 'a few problems are each printed with their line, and nothing more', reasons: [CURRENCY, COUNTRY], prints: [`line 1: ${CURRENCY}`, `line 2: ${COUNTRY}`] },
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
