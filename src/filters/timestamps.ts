/** A span of whole UTC seconds, both ends included. */
export interface SecondSpan {
  start: number;
  end: number;
}

const DAY_SECONDS = 86_400;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// The offset may start with a space: a `+` in a query string decodes to one.
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+\- ]\d{2}:\d{2})?$/;

/**
 * Parses a date `YYYY-MM-DD` into its whole UTC day, or an RFC 3339 timestamp (UTC when it
 * has no offset) into its one second. Returns undefined for anything else, including
 * impossible dates such as 2026-02-30.
 */
export function parseTimeSpan(text: string): SecondSpan | undefined {
  const date = DATE.exec(text);
  if (date) {
    const start = utcSeconds(Number(date[1]), Number(date[2]), Number(date[3]), 0, 0, 0);
    return start === undefined ? undefined : { start, end: start + DAY_SECONDS - 1 };
  }
  const stamp = TIMESTAMP.exec(text);
  if (!stamp) return undefined;
  const [, y, mo, d, h, mi, s, , offset] = stamp;
  const local = utcSeconds(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s));
  if (local === undefined) return undefined;
  const shift = offsetSeconds(offset);
  if (shift === undefined) return undefined;
  const second = local - shift;
  return { start: second, end: second };
}

/** Like parseTimeSpan, for a stored value: only a full timestamp, as epoch seconds. */
export function parseTimestamp(text: string): number | undefined {
  if (DATE.test(text)) return undefined;
  return parseTimeSpan(text)?.start;
}

export function formatTimestamp(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// How formatTimestamp writes every time of years 1 to 9999.
const FORMATTED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
// The first and last second formatTimestamp writes as RFC 3339: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
const FIRST_WRITABLE = utcSeconds(1, 1, 1, 0, 0, 0)!;
const LAST_WRITABLE = utcSeconds(9999, 12, 31, 23, 59, 59)!;

/**
 * Whether formatTimestamp writes the time as RFC 3339: a UTC year of 1 to 9999. A time written
 * with an offset can lie outside though its own year does not (9999-12-31T23:00:00-05:00).
 */
export function isWritableTime(epochSeconds: number): boolean {
  return epochSeconds >= FIRST_WRITABLE && epochSeconds <= LAST_WRITABLE;
}

/**
 * A time as formatTimestamp writes it, given as its text and the epoch seconds parsed from that
 * text: the text itself when it is already so written, as an import's times mostly are, which
 * spares writing it again.
 */
export function canonicalTimestamp(text: unknown, epochSeconds: number): string {
  return typeof text === 'string' && FORMATTED.test(text) ? text : formatTimestamp(epochSeconds);
}

function utcSeconds(y: number, mo: number, d: number, h: number, mi: number, s: number): number | undefined {
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d); // unlike Date.UTC, keeps years 1 to 99 as written
  date.setUTCHours(h, mi, s, 0);
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return undefined; // 2026-02-30
  return date.getTime() / 1000;
}

function offsetSeconds(offset: string | undefined): number | undefined {
  if (offset === undefined || offset === 'Z' || offset === 'z') return 0;
  const sign = offset[0] === '-' ? -1 : 1;
  const hours = Number(offset.slice(1, 3));
  const minutes = Number(offset.slice(4, 6));
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 3600 + minutes * 60);
}
