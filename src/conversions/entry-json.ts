import { jsonFieldsOf } from '../filters/catalogue.js';
import { formatTimestamp } from '../filters/timestamps.js';
import type { NewConversion } from './repository.js';
import { ConversionEntry } from './schema.js';

// The entry schema's fields but the id, which the database assigns on insert.
const FIELDS = jsonFieldsOf(ConversionEntry).filter((field) => field.name !== 'id');

/**
 * A conversion as the API writes it (ConversionEntry, in the schema's order), but for its id:
 * written once on import and stored with the row, so that a list page is read, not built
 * field by field. Conversions never change after import, so it never goes stale.
 */
export function entryJsonOf(row: Omit<NewConversion, 'entry_json'>): string {
  const values = row as unknown as Record<string, unknown>;
  let json = '';
  for (const { name, kind } of FIELDS) {
    const value = values[name];
    let text: string;
    if (value === null || value === undefined) text = 'null';
    else if (kind === 'json')
      text = value as string; // stored as JSON text already
    else if (kind === 'boolean') text = value === 1 || value === true ? 'true' : 'false';
    else if (kind === 'timestamp') text = `"${formatTimestamp(value as number)}"`;
    else text = JSON.stringify(value);
    json += `${json === '' ? '{' : ','}"${name}":${text}`;
  }
  return `${json}}`;
}

/** The whole entry: its id first, where the schema has it, then the stored rest. */
export function withId(id: number, entryJson: string): string {
  return `{"id":${id},${entryJson.slice(1)}`;
}
