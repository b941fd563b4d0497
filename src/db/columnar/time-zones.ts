/**
 * A time zone's offsets from UTC over a span of time, so that local time is an addition: DuckDB
 * converting every row through ICU (`timezone(tz, to_timestamp(t))`) took three times as long as
 * the whole rest of a summary (docs/performance.md).
 */

/** From `from` (epoch seconds; undefined: since ever) on, local time is UTC plus `offsetSeconds`. */
export interface OffsetSpan {
  from: number | undefined;
  offsetSeconds: number;
}

const DAY_SECONDS = 86_400;

/** The offset from UTC, in seconds, of `timeZone` at `epochSeconds`, as ICU knows it. */
export function offsetAt(format: Intl.DateTimeFormat, epochSeconds: number): number {
  const name = format.formatToParts(new Date(epochSeconds * 1000)).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT';
  // "GMT" for UTC itself, else "GMT+05:30" or "GMT-04:00".
  const match = /^GMT([+-])(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(name);
  if (!match) return 0;
  const seconds = Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4] ?? 0);
  return match[1] === '-' ? -seconds : seconds;
}

/**
 * The offsets of `timeZone` from `from` to `to` (epoch seconds), each change found to the
 * second: looked for a day at a time, as no zone changes twice within a day.
 */
export function offsetSpans(timeZone: string, from: number, to: number): OffsetSpan[] {
  const format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
  const spans: OffsetSpan[] = [{ from: undefined, offsetSeconds: offsetAt(format, from) }];
  for (let day = from; day < to; day += DAY_SECONDS) {
    const next = Math.min(day + DAY_SECONDS, to);
    const offset = offsetAt(format, next);
    if (offset === spans.at(-1)!.offsetSeconds) continue;
    // The first second of the new offset lies in (day, next].
    let [before, after] = [day, next];
    while (after - before > 1) {
      const middle = Math.floor((before + after) / 2);
      if (offsetAt(format, middle) === offset) after = middle;
      else before = middle;
    }
    spans.push({ from: after, offsetSeconds: offset });
  }
  return spans;
}

/** The length of the windows of time a summary finds a time zone's offsets over: 30 days, in seconds. */
export const WINDOW_SECONDS = 30 * DAY_SECONDS;

/**
 * The offsets of `timeZone` over the windows `windows` (each a number of whole WINDOW_SECONDS
 * since 1970, in ascending order), found only where rows lie: a conversion dated a century away
 * from the others costs a window more, not a look at every day between. Between windows it says
 * nothing true, and needs not: no row lies there.
 */
export function offsetSpansOver(timeZone: string, windows: readonly number[]): OffsetSpan[] {
  const spans: OffsetSpan[] = [];
  for (const window of windows) {
    const from = window * WINDOW_SECONDS;
    const [atStart, ...changes] = offsetSpans(timeZone, from, from + WINDOW_SECONDS);
    for (const span of [{ from, offsetSeconds: atStart!.offsetSeconds }, ...changes]) {
      if (span.offsetSeconds !== spans.at(-1)?.offsetSeconds) spans.push(span);
    }
  }
  if (spans[0]) spans[0] = { from: undefined, offsetSeconds: spans[0].offsetSeconds };
  return spans;
}
