import { createHash } from 'node:crypto';
import type { FilterColumn } from '../../filters/catalogue.js';
import type { Condition, Filter } from '../../filters/parse.js';
import { stored } from './filters.js';
import type { SourceLayout } from './protocol.js';

/**
 * Rows of the source that the index has not appended yet, read for questions of a page and for
 * summaries while rows keep arriving (a cart's notifications): a question then counts (or sums)
 * the index's rows up to its watermark and matches these few in JavaScript, instead of waiting
 * for a catch-up of its own. What the index would hold of each is derived here as its indexing statements derive it
 * (queries.ts), and matched as its SQL matches (filters.ts); tests hold the two to the same
 * answers.
 */

/** A column's value as the index holds it: booleans as 0/1, timestamps as epoch seconds, an array as its string elements; null when absent. */
export type IndexedValue = number | string | string[] | null;

/** A source row not yet in the index. */
export interface UnindexedRow {
  id: number;
  accountId: number;
  /** By column name. */
  values: Record<string, IndexedValue>;
  /** The hash of each hashed column's value (hashOf), by the column's name; null when absent. */
  hashes: Record<string, bigint | null>;
}

/**
 * A source row (id, account, the layout's row columns, its document) as the index would hold
 * it. The document is an entry written from the resource's schema, so every value has its
 * column's type.
 */
export function unindexedRowOf(row: unknown[], columns: FilterColumn[], hashed: string[], layout: SourceLayout): UnindexedRow {
  const document = JSON.parse(row[2 + layout.rowColumns.length] as string) as Record<string, unknown>;
  const values: Record<string, IndexedValue> = {};
  for (const column of columns) {
    const at = layout.rowColumns.indexOf(column.name);
    const value = at === -1 ? document[column.name] : row[2 + at];
    values[column.name] = indexedValue(column, value);
  }
  const hashes: Record<string, bigint | null> = {};
  for (const name of hashed) hashes[name] = typeof document[name] === 'string' ? hashOf(document[name]) : null;
  return { id: Number(row[0]), accountId: Number(row[1]), values, hashes };
}

/** A hashed column's value as the index's indexing statements hash it: the first 8 bytes of its SHA-256, as an unsigned big-endian number. */
export function hashOf(text: string): bigint {
  return createHash('sha256').update(text).digest().readBigUInt64BE(0);
}

function indexedValue(column: FilterColumn, value: unknown): IndexedValue {
  if (value === null || value === undefined) return null;
  if (column.type === 'stringArray') return (value as unknown[]).filter((element): element is string => typeof element === 'string');
  if (column.type === 'boolean') return Number(value);
  return value as number | string;
}

/**
 * The rows of `filters`, as the index's SQL has them: every filter holds; a condition on a null
 * value never does; an array column's filter holds when one of its elements satisfies it.
 */
export function rowMatcher(filters: Filter[]): (row: UnindexedRow) => boolean {
  const tests = filters.map(({ column, condition }) => {
    const holds = conditionTest(condition);
    if (column.name === 'id') return (row: UnindexedRow) => holds(row.id);
    if (column.type === 'stringArray') return (row: UnindexedRow) => (row.values[column.name] as string[] | null)?.some(holds) ?? false;
    return (row: UnindexedRow) => holds(row.values[column.name] as number | string | null);
  });
  return (row) => tests.every((holds) => holds(row));
}

function conditionTest(condition: Condition): (value: number | string | null) => boolean {
  switch (condition.kind) {
    case 'compare': {
      const target = stored(condition.value);
      const op = condition.op;
      return (value) => value !== null && satisfies(compare(value, target), op);
    }
    case 'range': {
      const [from, to] = [stored(condition.from), stored(condition.to)];
      return (value) => value !== null && compare(value, from) >= 0 && compare(value, to) <= 0;
    }
    case 'in': {
      const targets = condition.values.map(stored);
      return (value) => value !== null && targets.some((target) => compare(value, target) === 0);
    }
    case 'anyOf': {
      const tests = condition.conditions.map(conditionTest);
      return (value) => tests.some((holds) => holds(value));
    }
  }
}

function satisfies(order: number, op: Extract<Condition, { kind: 'compare' }>['op']): boolean {
  switch (op) {
    case '=':
      return order === 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
  }
}

// A UTF-16 unit of a surrogate pair or above: where UTF-16's order and UTF-8's part.
const ABOVE_BASIC_ORDER = /[\uD800-\uFFFF]/;

/**
 * Numbers by value; strings by their UTF-8 bytes, as DuckDB orders VARCHAR. JavaScript orders
 * strings by UTF-16 units, which agrees with that except where a character beyond U+FFFF meets
 * one from U+E000 to U+FFFF.
 */
export function compare(a: number | string, b: number | string): number {
  if (typeof a === 'number' || typeof b === 'number') return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  if (a === b) return 0;
  if (ABOVE_BASIC_ORDER.test(a) || ABOVE_BASIC_ORDER.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : 1;
}
