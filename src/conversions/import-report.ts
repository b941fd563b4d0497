/**
 * What the command line prints about an import, as pure functions of what the import reports:
 * the import itself prints nothing (ImportOptions carries its hooks).
 */

/** 1234567 as 1,234,567: counts read as people write them. */
export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/** The one warning of an import whose rows carried an id, which the import ignores; undefined when none did. */
export function ignoredIdsWarning(rows: number): string | undefined {
  if (rows === 0) return undefined;
  return `warning: the id field of ${formatCount(rows)} row${rows === 1 ? '' : 's'} was ignored: acds gives each imported conversion its own id`;
}
