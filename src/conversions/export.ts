import { badRequest } from '../errors.js';
import { jsonFieldsOf } from '../filters/catalogue.js';
import { type Filter, parseFilters, type RawQuery, single } from '../filters/parse.js';
import { withId } from './entry-json.js';
import { ConversionEntry, conversionCatalogue } from './schema.js';

export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/** Conversions read and written per batch: a batch of ids from the index, then their entries. */
export const EXPORT_BATCH = 2_000;

/** What an export asks: the list's filters, and the format. */
export interface ExportQuery {
  filters: Filter[];
  format: ExportFormat;
}

/**
 * Reads an export's query string: the format from `format`, else from the Accept header (CSV
 * when it asks for text/csv), else NDJSON. Throws a 400 that says what to fix.
 */
export function parseExportQuery(query: RawQuery, accept: string | undefined): ExportQuery {
  const filters = parseFilters(query, conversionCatalogue, ['format']);
  if (query.format !== undefined) {
    const format = single('format', query.format);
    if (!(EXPORT_FORMATS as readonly string[]).includes(format)) throw badRequest(`format must be ${EXPORT_FORMATS.join(' or ')}, not ${format.slice(0, 40)}`);
    return { filters, format: format as ExportFormat };
  }
  return { filters, format: /\btext\/csv\b/i.test(accept ?? '') ? 'csv' : 'ndjson' };
}

// Every field of an entry, in the entry's order: the CSV's columns.
const FIELDS = jsonFieldsOf(ConversionEntry).map((field) => field.name);

/** The CSV's header row: every field of a conversion. */
export const CSV_HEADER = `${FIELDS.join(',')}\r\n`;

/** One conversion as a CSV row: arrays and products as JSON text in their cell, null as an empty cell. */
export function csvRow(entry: Record<string, unknown>): string {
  return `${FIELDS.map((name) => csvCell(entry[name])).join(',')}\r\n`;
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  // Quoted (RFC 4180) when it holds a separator, a quote or a line break.
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** What an export reads through: the index for ids, the row store for entries. */
export interface ExportSource {
  idsAfter(afterId: number, upTo: number | undefined, limit: number): Promise<{ ids: number[]; upTo: number }>;
  entriesByIds(ids: number[]): Promise<{ id: number; entry_json: string }[]>;
}

/**
 * The export's text, one batch of conversions at a time, in id order: read only as fast as the
 * consumer asks for the next chunk, so that a slow reader slows the export and memory holds one
 * batch. Every batch is of the rows there were when the export began.
 */
export async function* exportChunks(source: ExportSource, format: ExportFormat): AsyncGenerator<string> {
  if (format === 'csv') yield CSV_HEADER;
  let afterId = 0;
  let upTo: number | undefined;
  for (;;) {
    const batch = await source.idsAfter(afterId, upTo, EXPORT_BATCH);
    upTo = batch.upTo;
    if (batch.ids.length === 0) return;
    const rows = await source.entriesByIds(batch.ids);
    if (rows.length !== batch.ids.length)
      throw new Error(`the columnar index listed ${batch.ids.length} conversions, the database holds ${rows.length} of them`);
    yield rows.map((row) => (format === 'csv' ? csvRow(JSON.parse(withId(row.id, row.entry_json))) : `${withId(row.id, row.entry_json)}\n`)).join('');
    afterId = batch.ids.at(-1)!;
  }
}
