import { jsonFieldsOf } from '../filters/catalogue.js';
import { formatTimestamp } from '../filters/timestamps.js';
import { ConversionEntry } from './schema.js';

// The entry schema's fields but the id, which the database assigns on insert.
const FIELDS = jsonFieldsOf(ConversionEntry).filter((field) => field.name !== 'id');

/**
 * A conversion as the API writes it (ConversionEntry, in the schema's order), but for its id,
 * from a record the import has checked and its time in epoch seconds: written once on import
 * and stored with the row, so that a list page is read, not built field by field. Conversions
 * never change after import, so it never goes stale. A field left out is null, an array left
 * out is empty, and text holds only whole characters (well-formed UTF-16), so that every reader
 * of the stored JSON, DuckDB's among them, reads it alike.
 */
export function entryJsonOf(record: Readonly<Record<string, unknown>>, createdAt: number): string {
  let json = '';
  for (const { name, kind } of FIELDS) {
    const value = record[name];
    let text: string;
    if (kind === 'timestamp') text = `"${formatTimestamp(createdAt)}"`;
    else if (value === null || value === undefined) text = kind === 'json' ? '[]' : 'null';
    else text = JSON.stringify(value);
    json += `${json === '' ? '{' : ','}"${name}":${text}`;
  }
  json += '}';
  // JSON.stringify escapes a lone surrogate (half of a character) as \udxxx; such text is
  // made whole, each half replaced by U+FFFD, as SQLite and PostgreSQL store it anyway.
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
