import { addDays, startOfDay } from './dates.js';

/**
 * The conversions query as the console keeps it: the text of a query string in the API's own
 * filter language (`utm_source=facebook&amount.gte=50`), which the conversions and reports tabs
 * share, shown and edited as it is.
 */

export interface Clause {
  name: string;
  value: string;
}

export function clausesOf(query: string): Clause[] {
  return [...new URLSearchParams(query.trim().replace(/^\?/, ''))].map(([name, value]) => ({ name, value }));
}

/** The query text of clauses, commas and colons left readable. */
export function queryOf(clauses: Clause[]): string {
  const encode = (text: string) => encodeURIComponent(text).replace(/%2C/gi, ',').replace(/%3A/gi, ':');
  return clauses.map(({ name, value }) => `${encode(name)}=${encode(value)}`).join('&');
}

/** The clauses with `clause` in place of one of the same name, or after them when there is none. */
export function withClause(clauses: Clause[], clause: Clause): Clause[] {
  const at = clauses.findIndex(({ name }) => name === clause.name);
  return at < 0 ? [...clauses, clause] : clauses.map((each, index) => (index === at ? clause : each));
}

/**
 * The filters object the client takes (lists stay comma-separated, as the API reads them); a
 * parameter given twice is refused as the API refuses it, rather than one of them quietly kept.
 */
export function filtersOf(query: string): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const { name, value } of clausesOf(query)) {
    if (name in filters) throw new Error(`${name} is given more than once: keep one`);
    filters[name] = value;
  }
  return filters;
}

/**
 * The query's filters within a report's range: from the instant its first day starts in
 * `timeZone` to the instant the day after its last starts. The range goes beside the query's own
 * bounds of `created_at`, which the API reads (and intersects with it) by its own rules, under
 * parameters the query leaves free: `.gte` and `.lt`, or else `.between`.
 */
export function filtersWithin(query: string, from: string, to: string, timeZone: string): Record<string, string> {
  const filters = filtersOf(query);
  const start = startOfDay(from, timeZone);
  const end = startOfDay(addDays(to, 1), timeZone);
  if (!('created_at.gte' in filters) && !('created_at.lt' in filters)) {
    return { ...filters, 'created_at.gte': start.toISOString(), 'created_at.lt': end.toISOString() };
  }
  // Times are whole seconds: the last second of the range is the last one before its end.
  const last = new Date(end.getTime() - 1000);
  if (!('created_at.between' in filters)) return { ...filters, 'created_at.between': `${start.toISOString()},${last.toISOString()}` };
  throw new Error('the query bounds created_at both with .gte or .lt and with .between: keep one of them for a report');
}
