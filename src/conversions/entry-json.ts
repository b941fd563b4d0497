import fastJson from 'fast-json-stringify';
import { withoutNull } from '../filters/catalogue.js';
import { canonicalTimestamp } from '../filters/timestamps.js';
import { ConversionEntry } from './schema.js';

// The entry's fields but its id, which the database gives: each written by its type, null when
// left out (an array empty), in the schema's order. Compiled once (fast-json-stringify):
// building the text field by field took twice as long, a third of an import's time on the
// command line.
const { id: _id, ...FIELDS_BUT_ID } = ConversionEntry.properties;
const writeFieldsButId = fastJson({
  type: 'object',
  properties: Object.fromEntries(
    Object.entries(FIELDS_BUT_ID).map(([name, property]) => {
      const schema = withoutNull(property);
      return [name, schema.type === 'array' ? { type: 'array', items: schema.items, default: [] } : { type: [schema.type, 'null'], default: null }];
    }),
  ),
});

/**
 * A conversion as the API writes it (ConversionEntry, in the schema's order), but for its id,
 * from a record the import has checked and its time in epoch seconds: written once on import
 * and stored with the row, so that a list page is read, not built field by field. Conversions
 * never change after import, so it never goes stale. A field left out is null, an array left
 * out is empty, fields the entry does not have are left out, and text holds only whole
 * characters (well-formed UTF-16), so that every reader of the stored JSON, DuckDB's among
 * them, reads it alike.
 */
export function entryJsonOf(record: Readonly<Record<string, unknown>>, createdAt: number): string {
  const json = writeFieldsButId({ ...record, created_at: canonicalTimestamp(record.created_at, createdAt) });
  // Lone surrogates (half of a character) are written as \udxxx; such text is made whole, each
  // half replaced by U+FFFD, as SQLite and PostgreSQL store it anyway.
  return json.includes('\\ud') ? wellFormedJson(json) : json;
}

/** JSON text whose strings hold lone surrogates written again with each replaced by U+FFFD. */
export function wellFormedJson(json: string): string {
  return JSON.stringify(JSON.parse(json, (_key, value: unknown) => (typeof value === 'string' ? value.toWellFormed() : value)));
}

/** The whole entry: its id first, where the schema has it, then the stored rest. */
export function withId(id: number, entryJson: string): string {
  return `{"id":${id},${entryJson.slice(1)}`;
}
