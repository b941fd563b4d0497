import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Whether an If-None-Match header names `etag`, or is `*`. The comparison is weak, as
 * RFC 9110 §13.1.2 asks for If-None-Match: W/"x" and "x" name the same representation.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}

/**
 * Tags a list response and tells whether the client holds it already (answer 304 then). A list
 * is revalidated on every use (no-cache) and is the key holder's alone (private).
 */
export function listNotModified(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  reply.header('etag', etag).header('cache-control', 'private, no-cache');
  return ifNoneMatchHits(request.headers['if-none-match'], etag);
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = `(${DAYS.join('|')})`;
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// The three forms of an HTTP-date (RFC 9110 §5.6.7): IMF-fixdate, RFC 850's and asctime's.
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC_850 = new RegExp(`^(${DAYS.map((day) => `${day}[a-z]*`).join('|')}), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/**
 * The time an HTTP-date names, in milliseconds since 1970, or undefined when the text is none
 * (RFC 9110 §5.6.7): a conditional header holding anything else must be ignored, where
 * Date.parse reads `2099` or `garbage 2099` as a date.
 */
export function parseHttpDate(text: string): number | undefined {
  let parts: { day: string; month: string; year: number; time: string[] } | undefined;
  const imf = IMF_FIXDATE.exec(text);
  if (imf) parts = { day: imf[2]!, month: imf[3]!, year: Number(imf[4]), time: imf.slice(5, 8) };
  const rfc850 = !parts && RFC_850.exec(text);
  if (rfc850) {
    // A two-digit year more than 50 years ahead is the most recent past year with those digits.
    const thisYear = new Date().getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(rfc850[4]);
    if (year > thisYear + 50) year -= 100;
    parts = { day: rfc850[2]!, month: rfc850[3]!, year, time: rfc850.slice(5, 8) };
  }
  const asctime = !parts && ASCTIME.exec(text);
  if (asctime) parts = { day: asctime[3]!.trim(), month: asctime[2]!, year: Number(asctime[7]), time: asctime.slice(4, 7) };
  if (!parts) return undefined;
  const fields = [parts.year, MONTHS.indexOf(parts.month), Number(parts.day), ...parts.time.map(Number)] as const;
  const time = Date.UTC(...fields);
  // Date.UTC carries 31 Feb into March and 24:00 into the next day: such a date is no date.
  const date = new Date(time);
  const read = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()];
  return read.every((value, index) => value === fields[index]) ? time : undefined;
}
