import { Type, type TSchema } from 'typebox';
import type { Catalogue, ColumnType } from '../filters/catalogue.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ListPageJson, PreparedList } from '../filters/list.js';
import { listNotModified } from './conditional.js';
import { pageLinks } from './links.js';
import { JSON_CONTENT_TYPE } from './reply.js';
import { MAX_LIST_VALUES, MAX_VALUE_LENGTH, type Modifier, type RawQuery } from '../filters/parse.js';

/** The list envelope (docs/api.md, "Listing") around a resource's entries. */
export const ListEnvelope = <Entry extends TSchema>(entry: Entry, description: string) =>
  Type.Object(
    {
      entries: Type.Array(entry, { description: 'The entries of the page, at most 100, in ascending id order' }),
      totalEntries: Type.Integer({ description: 'How many entries match the filters' }),
      page: Type.Integer({ description: 'The page returned' }),
      totalPages: Type.Integer({ description: 'ceil(totalEntries / 100); 0 when nothing matches' }),
    },
    { description },
  );

const ENTRIES_START = Buffer.from('{"entries":[');

/**
 * A list page whose entries are JSON already, as the envelope's JSON: bytes when the entries
 * are bytes (read as such from the database), so that a page is never decoded into a string
 * and encoded again.
 */
export function listPageBody({ entriesJson, totalEntries, page, totalPages }: ListPageJson): Buffer | string {
  const end = `],"totalEntries":${totalEntries},"page":${page},"totalPages":${totalPages}}`;
  return typeof entriesJson === 'string' ? `{"entries":[${entriesJson}${end}` : Buffer.concat([ENTRIES_START, entriesJson, Buffer.from(end)]);
}

/**
 * Answers a list request: 304 when the client holds the page already, else the page as it is
 * (its entries are JSON already), with the Link header of the pages around it.
 */
export async function sendListPage(request: FastifyRequest, reply: FastifyReply, list: PreparedList): Promise<FastifyReply> {
  if (listNotModified(request, reply, list.etag)) return reply.code(304).send();
  const page = await list.read();
  const links = pageLinks(request.url, page.page, page.totalPages);
  if (links) reply.header('link', links);
  return reply.type(JSON_CONTENT_TYPE).send(listPageBody(page));
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
  return filterQueryDocs(catalogue, { page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, from 1; default 1' })) });
}

/**
 * A query string of the filter language beside the endpoint's own parameters `params`: every
 * form of every filterable column as a parameter of its own (`amount`, `amount.gte`,
 * `amount.between`, `cart_integration.in`, ...), typed as the column is, so that a client
 * generated from the document accepts each and rejects a misspelt one. Lists are
 * comma-separated (form style, not exploded).
 */
export function filterQueryDocs(catalogue: Catalogue, params: Record<string, TSchema>) {
  const properties: Record<string, TSchema> = { ...params };
  for (const column of catalogue.values()) {
    // A boolean filter is written t, f, true or false.
    const example = column.type === 'boolean' && column.example !== undefined ? String(column.example) : column.example;
    const examples = (value: unknown) => (example === undefined ? {} : { examples: [value] });
    const value = (description: string) => filterValue(column.type, { description, ...examples(example) });
    properties[column.name] = Type.Optional(value(`${column.name} equal to this${column.type === 'stringArray' ? ' (one of its elements)' : ''}`));
    if (column.type === 'boolean') continue;
    for (const [modifier, op] of COMPARISONS) properties[`${column.name}.${modifier}`] = Type.Optional(value(`${column.name} ${op} this`));
    properties[`${column.name}.between`] = Type.Optional(
      Type.Array(filterValue(column.type), {
        minItems: 2,
        maxItems: 2,
        description: `${column.name} from the first to the second, both included; comma-separated`,
      }),
    );
    properties[`${column.name}.in`] = Type.Optional(
      Type.Array(filterValue(column.type), {
        minItems: 1,
        maxItems: MAX_LIST_VALUES,
        description: `${column.name} equal to one of these; comma-separated`,
        ...examples([example]),
      }),
    );
  }
  // Typed as what the query string parser hands the route, repeated parameters as arrays, since
  // nothing checks it against these properties first.
  return Type.Unsafe<RawQuery>(Type.Object(properties, { additionalProperties: false, style: 'form', explode: false }));
}

const COMPARISONS = [
  ['gt', 'above'],
  ['gte', 'at least'],
  ['lt', 'below'],
  ['lte', 'at most'],
] as const satisfies readonly (readonly [Modifier, string])[];

/** One value of a filter on a column of `type`, as the filter engine parses it. */
function filterValue(type: ColumnType, annotations: { description?: string; examples?: unknown[] } = {}): TSchema {
  switch (type) {
    case 'integer':
      return Type.Integer(annotations);
    case 'number':
      return Type.Number(annotations);
    case 'boolean':
      return Type.String({ enum: ['t', 'f', 'true', 'false'], ...annotations });
    case 'timestamp':
      return Type.String({
        ...annotations,
        description: `${annotations.description ?? 'A time'}: a date such as 2026-11-22 (the whole day, UTC) or an RFC 3339 timestamp`,
      });
    case 'string':
    case 'stringArray':
      return Type.String({ maxLength: MAX_VALUE_LENGTH, ...annotations });
  }
}

/**
 * For schemas that document a request (in OpenAPI) but are not to be checked by Fastify: list
 * query strings and asset forms are parsed by our own code, which must reject what no schema
 * lists and answer as docs/api.md says: a 400 whose JSON string names the field at fault.
 */
export const documentationOnly = () => (value: unknown) => ({ value });
