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

/** The filters object the client takes: lists stay comma-separated, as the API reads them. */
export function filtersOf(query: string): Record<string, string> {
  return Object.fromEntries(clausesOf(query).map(({ name, value }) => [name, value]));
}
