import { formatCount, type ImportProgress } from './import.js';

/**
 * What the command line prints about an import, made only from what the import tells its hooks
 * (ImportOptions), with the clock given, so that each line can be tested: the import itself
 * prints nothing.
 */

/** The one warning of an import whose rows carried an id, which the import ignores; undefined when none did. */
export function ignoredIdsWarning(rows: number): string | undefined {
  if (rows === 0) return undefined;
  return `warning: the id field of ${formatCount(rows)} row${rows === 1 ? '' : 's'} was ignored: acds gives each imported conversion its own id`;
}

/** How many problems are printed one a line; the rest are counted by reason. */
const PROBLEMS_PRINTED = 20;
/** How many reasons the count of the rest names; the others are summed up in one line. */
const REASONS_NAMED = 10;
/**
 * How many distinct reasons are counted apart: a file can name a new unknown field on every line,
 * and the counts must not grow with the file.
 */
const REASONS_COUNTED = 100;

/**
 * The problems of a rejected import as a person can read them: the first PROBLEMS_PRINTED as
 * they are found, each with its line, and then how many more there were of each reason. Its
 * memory is bounded whatever the file: counts per reason, not the problems.
 */
export class ProblemReport {
  private printed = 0;
  private more = 0;
  private readonly countsByReason = new Map<string, number>();
  private uncounted = 0;

  constructor(private readonly print: (line: string) => void) {}

  add({ line, reason }: { line: number; reason: string }): void {
    if (this.printed < PROBLEMS_PRINTED) {
      this.printed += 1;
      this.print(`line ${line}: ${reason}`);
      return;
    }
    this.more += 1;
    const count = this.countsByReason.get(reason);
    if (count !== undefined || this.countsByReason.size < REASONS_COUNTED) this.countsByReason.set(reason, (count ?? 0) + 1);
    else this.uncounted += 1;
  }

  /** Prints the summary, if any. */
  end(): void {
    for (const line of this.summary()) this.print(line);
  }

  /** The lines that count the problems not printed, most frequent reason first; none if every problem was printed. */
  summary(): string[] {
    if (this.more === 0) return [];
    const byCount = [...this.countsByReason].sort(([, a], [, b]) => b - a);
    const named = byCount.slice(0, REASONS_NAMED);
    const others = byCount.slice(REASONS_NAMED).reduce((sum, [, count]) => sum + count, this.uncounted);
    const counts = [...named.map(([reason, count]) => [formatCount(count), reason]), ...(others > 0 ? [[formatCount(others), 'other reasons']] : [])];
    const width = Math.max(...counts.map(([count]) => count!.length));
    return [
      `... and ${formatCount(this.more)} more problem${this.more === 1 ? '' : 's'}:`,
      ...counts.map(([count, reason]) => `  ${count!.padStart(width)} × ${reason}`),
    ];
  }
}

/** An import that ends within this time prints only its result: its progress would be noise. */
const QUIET_FOR_MS = 2_000;
/** After that, a line each time the phase changes, and one this often within a phase. */
const PROGRESS_EVERY_MS = 5_000;

export interface ProgressReportOptions {
  print: (line: string) => void;
  /** What the first phase does to its rows: `reading` a file, `generating` synthetic data. */
  reading?: string;
  /** How much of the input is read, from 0 to 1, when that is known: a file's bytes, the rows asked of a generator. */
  fractionRead?: (rows: number) => number;
  now?: () => number;
}

/**
 * The progress of an import on standard error, as lines, so that a log of it reads as well as a
 * terminal: nothing for a short import, then one line as each phase starts (reading with the
 * percentage read, committing) and one every few seconds within.
 */
export class ProgressReport {
  private readonly started: number;
  private printedPhase: ImportProgress['phase'] | undefined;
  private printedAt = 0;

  constructor(private readonly options: ProgressReportOptions) {
    this.started = this.now();
  }

  update(progress: ImportProgress): void {
    const now = this.now();
    if (now - this.started < QUIET_FOR_MS) return;
    if (progress.phase === this.printedPhase && now - this.printedAt < PROGRESS_EVERY_MS) return;
    this.printedPhase = progress.phase;
    this.printedAt = now;
    this.options.print(this.describe(progress));
  }

  private describe(progress: ImportProgress): string {
    switch (progress.phase) {
      case 'reading': {
        const rows = `${formatCount(progress.rows)} row${progress.rows === 1 ? '' : 's'}`;
        const fraction = this.options.fractionRead?.(progress.rows);
        return `${this.options.reading ?? 'reading'}: ${fraction === undefined ? rows : `${percent(fraction)} (${rows})`}`;
      }
      case 'committing':
        return 'committing';
    }
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/** Whole percent, rounded down: 100% only once all is done. */
function percent(fraction: number): string {
  return `${Math.floor(Math.min(Math.max(fraction, 0), 1) * 100)}%`;
}
