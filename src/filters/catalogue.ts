import type { TObject, TSchema } from 'typebox';
import type { JsonField } from '../db/database.js';

/** The value types a filter knows how to parse and compare (docs/api.md, "Filters"). */
export type ColumnType = 'integer' | 'number' | 'string' | 'timestamp' | 'boolean' | 'stringArray';

export interface ArrayStorage {
  /** Child table with one row per element, with an `account_id` column and an index on (account_id, value, parent). */
  table: string;
  /** Its column pointing at the parent row's id. */
  parentColumn: string;
  /** Its column holding the element. */
  valueColumn: string;
}

export interface FilterColumn {
  name: string;
  type: ColumnType;
  /** Only for `stringArray`: where the elements live. */
  storage?: ArrayStorage;
  /** One value to filter it by, from the entry schema's example, for the OpenAPI document; absent where the example has none. */
  example?: string | number | boolean;
}

/** The filterable columns of one resource, by name. */
export type Catalogue = ReadonlyMap<string, FilterColumn>;

/**
 * Derives the filter catalogue from a resource's entry schema, so that the type a filter
 * parses is always the type the entry declares. `arrays` says where array columns are stored.
 */
export function catalogueFromSchema(entry: TObject, filterable: readonly string[], arrays: Record<string, ArrayStorage> = {}): Catalogue {
  const catalogue = new Map<string, FilterColumn>();
  for (const name of filterable) {
    const property = entry.properties[name];
    if (!property) throw new Error(`filterable column ${name} is not in the entry schema`);
    const type = columnTypeOf(property);
    if (!type) throw new Error(`no filter type for column ${name}`);
    if (type === 'stringArray' && !arrays[name]) throw new Error(`array column ${name} needs its storage`);
    const example = exampleValue((entry as { examples?: Record<string, unknown>[] }).examples?.[0]?.[name]);
    catalogue.set(name, { name, type, ...(type === 'stringArray' ? { storage: arrays[name] } : {}), ...(example === undefined ? {} : { example }) });
  }
  return catalogue;
}

/** A filter value from an example entry's field: an array's first element; none for null. */
function exampleValue(field: unknown): FilterColumn['example'] {
  const value = Array.isArray(field) ? field[0] : field;
  return ['string', 'number', 'boolean'].includes(typeof value) ? value : undefined;
}

/** The one non-null type of a schema: `X | null` and unions of literals of one type reduce to it. */
export function withoutNull(schema: TSchema): Record<string, any> {
  const members = flatten(schema as Record<string, any>).filter((member) => member.type !== 'null');
  const [first, ...rest] = members;
  if (!first || rest.some((member) => member.type !== first.type)) {
    throw new Error('a filterable column has one type, optionally nullable');
  }
  return rest.length === 0 ? first : { type: first.type };
}

function flatten(schema: Record<string, any>): Record<string, any>[] {
  return Array.isArray(schema.anyOf) ? schema.anyOf.flatMap(flatten) : [schema];
}

/** The filter type of a property schema, or undefined when it has none (an array of objects, say). */
export function columnTypeOf(property: TSchema): ColumnType | undefined {
  const schema = withoutNull(property);
  switch (schema.type) {
    case 'integer':
      return 'integer';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'string':
      return schema.format === 'date-time' ? 'timestamp' : 'string';
    case 'array':
      if (schema.items?.type === 'string') return 'stringArray';
  }
  return undefined;
}

/**
 * How the database writes each property of an entry schema from its stored column (see
 * JsonField): booleans from 0/1, date-times from epoch seconds, arrays from JSON text.
 */
export function jsonFieldsOf(entry: TObject): JsonField[] {
  return Object.entries(entry.properties).map(([name, property]) => {
    const schema = withoutNull(property);
    switch (schema.type) {
      case 'array':
        return { name, kind: 'json' };
      case 'boolean':
        return { name, kind: 'boolean' };
      case 'number':
        return { name, kind: 'number' };
      case 'string':
        return { name, kind: schema.format === 'date-time' ? 'timestamp' : 'plain' };
      default:
        return { name, kind: 'plain' };
    }
  });
}
