import { Type, type TSchema } from 'typebox';
import type { Catalogue } from '../filters/catalogue.js';
import type { ListPage } from '../filters/list.js';
import { MODIFIERS, type RawQuery } from '../filters/parse.js';

/** The list envelope (docs/api.md, "Listing") around a resource's entries. */
export const ListEnvelope = <Entry extends TSchema>(entry: Entry) =>
  Type.Object({
    entries: Type.Array(entry, { description: 'The entries of the page, at most 100, in ascending id order' }),
    totalEntries: Type.Integer({ description: 'How many entries match the filters' }),
    page: Type.Integer({ description: 'The page returned' }),
    totalPages: Type.Integer({ description: 'ceil(totalEntries / 100); 0 when nothing matches' }),
  });

/** A list page whose entries are JSON texts already (built by the database), as one JSON text. */
export function listPageJson(page: ListPage<string>): string {
  return `{"entries":[${page.entries.join(',')}],"totalEntries":${page.totalEntries},"page":${page.page},"totalPages":${page.totalPages}}`;
}

export const ErrorMessage = Type.String({ description: 'What went wrong and how to fix it' });

/** Typed as nothing (void), so that a route's 304 is sent with no body, not with `null`. */
export const NotModified = Type.Unsafe<void>(Type.Null({ description: 'The page named by If-None-Match is still current: no body' }));

/**
 * The query string of a list route, for the OpenAPI document only: the filter engine parses
 * it itself, because it must reject what no schema lists: an unknown parameter is a 400 naming
 * it, so that a typo never quietly returns unfiltered data (docs/api.md, "Filters").
 */
export function listQueryDocs(catalogue: Catalogue) {
  return filterQueryDocs(catalogue, { page: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Page number, from 1; default 1' })) });
}

/** A query string of the filter language's filters beside the endpoint's own parameters `params`. */
export function filterQueryDocs(catalogue: Catalogue, params: Record<string, TSchema>) {
  const properties: Record<string, TSchema> = { ...params };
  for (const column of catalogue.values()) {
    const modifiers = column.type === 'boolean' ? 't or f; no modifiers' : `also ${column.name}.{${MODIFIERS.join(',')}}`;
    properties[column.name] = Type.Optional(Type.String({ description: `Exact match on ${column.name} (${column.type}); ${modifiers}` }));
  }
  // Typed as what the query string parser hands the route, repeated parameters as arrays, since
  // nothing checks it against these properties first.
  return Type.Unsafe<RawQuery>(Type.Object(properties, { additionalProperties: true }));
}

/**
 * For schemas that document a request (in OpenAPI) but are not to be checked by Fastify: list
 * query strings and asset forms are parsed by our own code, which must reject what no schema
 * lists and answer as docs/api.md says: a 400 whose JSON string names the field at fault.
 */
export const documentationOnly = () => (value: unknown) => ({ value });
