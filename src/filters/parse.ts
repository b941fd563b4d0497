import { parse as parseCsv } from 'csv-parse/sync';
import { badRequest } from '../errors.js';
import type { Catalogue, ColumnType, FilterColumn } from './catalogue.js';
import { parseTimeSpan, type SecondSpan } from './timestamps.js';

export const MODIFIERS = ['gt', 'gte', 'lt', 'lte', 'between', 'in'] as const;
export type Modifier = (typeof MODIFIERS)[number];

/** A value as stored: numbers (timestamps are epoch seconds), strings, booleans. */
export type Scalar = number | string | boolean;
export type Comparison = '=' | '>' | '>=' | '<' | '<=';

/** What one filter asks of its column; `anyOf` holds when any of its conditions does. */
export type Condition =
  | { kind: 'compare'; op: Comparison; value: Scalar }
  | { kind: 'range'; from: Scalar; to: Scalar }
  | { kind: 'in'; values: Scalar[] }
  | { kind: 'anyOf'; conditions: Condition[] };

export interface Filter {
  /** The query parameter as written, for messages. */
  param: string;
  column: FilterColumn;
  condition: Condition;
}

export interface ListQuery {
  page: number;
  filters: Filter[];
}

export const MAX_LIST_VALUES = 100;
export const MAX_VALUE_LENGTH = 2048;

/** A query string as Fastify's parser gives it: a repeated parameter as an array. */
export type RawQuery = Record<string, string | string[] | undefined>;

/**
 * Turns a list request's query string into a page number and filters, or throws a 400
 * naming the parameter at fault. Nothing unknown passes: a typo must never quietly
 * return unfiltered data (docs/api.md, "Filters").
 */
export function parseListQuery(query: RawQuery, catalogue: Catalogue): ListQuery {
  const filters = parseFilters(query, catalogue, ['page']);
  return { page: query.page === undefined ? 1 : parsePage(single('page', query.page)), filters };
}

/**
 * The filters of a query string whose other parameters are `otherParams` (read by the caller);
 * throws a 400 naming the parameter at fault, an unknown one included.
 */
export function parseFilters(query: RawQuery, catalogue: Catalogue, otherParams: readonly string[]): Filter[] {
  const filters: Filter[] = [];
  for (const [param, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const value = single(param, raw);
    if (!otherParams.includes(param)) filters.push(parseFilter(param, value, catalogue, otherParams));
  }
  return filters;
}

/** A parameter's one value: given twice, it is a 400. */
export function single(param: string, raw: string | string[]): string {
  if (Array.isArray(raw)) throw badRequest(`${param} is given more than once; give each parameter once`);
  return raw;
}

function parsePage(raw: string): number {
  const page = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(page) || page < 1) {
    throw badRequest('page must be a whole number of at least 1');
  }
  return page;
}

function parseFilter(param: string, raw: string, catalogue: Catalogue, otherParams: readonly string[]): Filter {
  const dot = param.indexOf('.');
  const name = dot === -1 ? param : param.slice(0, dot);
  const modifier = dot === -1 ? undefined : param.slice(dot + 1);
  const column = catalogue.get(name);
  if (!column) {
    throw badRequest(
      `${param} is not a known parameter; use ${[...otherParams, 'a filter'].join(', ').replace(/, ([^,]*)$/, ' or $1')} on one of: ${[...catalogue.keys()].join(', ')}`,
    );
  }
  if (modifier !== undefined && !isModifier(modifier)) {
    throw badRequest(`${param} has an unknown modifier "${modifier}"; use one of: ${MODIFIERS.join(', ')}`);
  }
  if (modifier !== undefined && column.type === 'boolean') {
    throw badRequest(`${param}: ${name} is a boolean column and takes only ${name}=t or ${name}=f`);
  }
  const values = modifier === 'between' || modifier === 'in' ? splitList(param, raw) : [raw];
  if (modifier === 'between' && values.length !== 2) {
    throw badRequest(`${param} takes exactly two comma-separated values, such as ${name}.between=a,b`);
  }
  if (modifier === 'in' && (values.length < 1 || values.length > MAX_LIST_VALUES)) {
    throw badRequest(`${param} takes from 1 to ${MAX_LIST_VALUES} comma-separated values`);
  }
  const parsed = values.map((value) => parseValue(param, column.type, value));
  return { param, column, condition: buildCondition(modifier, parsed) };
}

function isModifier(text: string): text is Modifier {
  return (MODIFIERS as readonly string[]).includes(text);
}

/** Splits `a,b,"c,d"` as one CSV record; `""` inside quotes is a literal quote. */
function splitList(param: string, raw: string): string[] {
  if (raw === '') return [];
  // Without quotes or line breaks the CSV record is the text between commas (most lists).
  if (!/["\r\n]/.test(raw)) return raw.split(',');
  let records: string[][];
  try {
    records = parseCsv(raw, { relax_column_count: true, relax_quotes: true });
  } catch {
    throw badRequest(`${param} has unbalanced double quotes; quote a value containing a comma as "a,b", and write a quote inside it as ""`);
  }
  if (records.length !== 1) throw badRequest(`${param} must be one line of comma-separated values`);
  return records[0] ?? [];
}

/**
 * A parsed value: a span for timestamps (a date covers its whole day, a full timestamp
 * its one second), the stored value for everything else.
 */
type Parsed = { span: SecondSpan } | { value: Scalar };

const EXPECTED: Record<ColumnType, string> = {
  integer: 'a whole number such as 42',
  number: 'a number such as 19.99',
  string: `text of at most ${MAX_VALUE_LENGTH} characters, without the NUL character`,
  stringArray: `text of at most ${MAX_VALUE_LENGTH} characters, without the NUL character`,
  timestamp: 'a date such as 2026-11-22 or a timestamp such as 2026-11-22T10:00:00Z',
  boolean: 't or f',
};

function parseValue(param: string, type: ColumnType, text: string): Parsed {
  const parsed = parseTyped(type, text);
  if (parsed === undefined) {
    const shown = text.length > 60 ? `${text.slice(0, 60)}...` : text;
    throw badRequest(`${param} has the invalid value "${shown}": expected ${EXPECTED[type]}`);
  }
  return parsed;
}

function parseTyped(type: ColumnType, text: string): Parsed | undefined {
  switch (type) {
    case 'integer': {
      const value = Number(text);
      return /^-?\d+$/.test(text) && Number.isSafeInteger(value) ? { value } : undefined;
    }
    case 'number': {
      const value = Number(text);
      return /^-?\d+(\.\d+)?$/.test(text) && Number.isFinite(value) ? { value } : undefined;
    }
    case 'boolean':
      if (text === 't' || text === 'true') return { value: true };
      if (text === 'f' || text === 'false') return { value: false };
      return undefined;
    case 'timestamp': {
      const span = parseTimeSpan(text);
      return span && { span };
    }
    case 'string':
    case 'stringArray':
      // PostgreSQL's text cannot hold U+0000, nor can a stored value have it (validate.ts).
      return text.length <= MAX_VALUE_LENGTH && !text.includes('\u0000') ? { value: text } : undefined;
  }
}

/** Maps a modifier and its parsed values onto a condition; spans follow the whole-day rule. */
function buildCondition(modifier: Modifier | undefined, values: Parsed[]): Condition {
  const [first, second] = values as [Parsed, Parsed];
  switch (modifier) {
    case undefined:
      return equals(first);
    case 'gt':
      return { kind: 'compare', op: '>', value: upper(first) };
    case 'gte':
      return { kind: 'compare', op: '>=', value: lower(first) };
    case 'lt':
      return { kind: 'compare', op: '<', value: lower(first) };
    case 'lte':
      return { kind: 'compare', op: '<=', value: upper(first) };
    case 'between':
      return { kind: 'range', from: lower(first), to: upper(second) };
    case 'in':
      if (values.every((value) => 'value' in value || value.span.start === value.span.end)) {
        return { kind: 'in', values: values.map(lower) };
      }
      return { kind: 'anyOf', conditions: values.map(equals) };
  }
}

function equals(parsed: Parsed): Condition {
  if ('value' in parsed) return { kind: 'compare', op: '=', value: parsed.value };
  const { start, end } = parsed.span;
  return start === end ? { kind: 'compare', op: '=', value: start } : { kind: 'range', from: start, to: end };
}

const lower = (parsed: Parsed): Scalar => ('value' in parsed ? parsed.value : parsed.span.start);
const upper = (parsed: Parsed): Scalar => ('value' in parsed ? parsed.value : parsed.span.end);
