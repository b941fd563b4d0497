import Negotiator from 'negotiator';
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

/**
 * Conversions read from the row store and written per batch. Each batch is a buffer of its own,
 * outside V8's heap. One still being sent or read ahead when V8 collects survives into the old
 * generation, and its bytes stay until a full collection: batches of 2,000 left the service's
 * memory higher after an export than batches of 1,000 (docs/performance.md).
 */
export const EXPORT_BATCH = 1_000;
/**
 * Ids asked of the index at a time, split into batches. The index keeps its rows in time order,
 * not in id order, so each question reads the ids of every row its filters leave: fewer, larger
 * questions make a faster export. But DuckDB keeps the first n ids as it reads (TOP_N) only up
 * to n = 5,000; beyond, it sorts every matching row, and the index's process grew with each
 * export (docs/performance.md). A plans test holds the question to the top n.
 */
export const IDS_PER_QUESTION = 5 * EXPORT_BATCH;

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
  return { filters, format: formatAccepted(accept) };
}

// The media types of the formats, in the order they are preferred when the client has no preference.
const MEDIA_TYPES: Record<string, ExportFormat> = { 'application/x-ndjson': 'ndjson', 'text/csv': 'csv' };

/** The format an Accept header prefers, by its q-values (RFC 9110); NDJSON when it names neither. */
function formatAccepted(accept: string | undefined): ExportFormat {
  const preferred = new Negotiator({ headers: { accept: accept === undefined ? undefined : typesAndQualities(accept) } }).mediaType(Object.keys(MEDIA_TYPES));
  return (preferred === undefined ? undefined : MEDIA_TYPES[preferred]) ?? 'ndjson';
}

/**
 * An Accept header's ranges with only their q-values: a range's other parameters (`charset=utf-8`,
 * `header=present`) say how the client would like the type written, and each format is written
 * one way; kept, they would make Negotiator match the range with no format at all.
 */
function typesAndQualities(accept: string): string {
  return accept
    .split(',')
    .map((range) => {
      const [type, ...parameters] = range.split(';');
      const quality = parameters.find((parameter) => /^\s*q\s*=/i.test(parameter));
      return quality === undefined ? type : `${type};${quality}`;
    })
    .join(',');
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
  ndjsonByIds(ids: number[]): Promise<Uint8Array | string>;
}

/**
 * The export's text, one batch of conversions at a time, in id order: read only as fast as the
 * consumer asks for the next chunk, so that a slow reader slows the export and memory holds two
 * batches (the one being sent and the next, read meanwhile). Every batch is of the rows there
 * were when the export began.
 */
export async function* exportChunks(source: ExportSource, format: ExportFormat): AsyncGenerator<Uint8Array | string> {
  const batches = batchesOfIds(source);
  const read = () => {
    const reading = readBatch(source, format, batches);
    // A consumer that stops reading leaves the batch read ahead unawaited; its failure is nobody's.
    reading.catch(() => {});
    return reading;
  };
  // The first batch is read before anything is yielded, so that a first chunk asked for before
  // the answer begins (the route's) fails as the whole request, not as a broken download.
  let text = await read();
  if (format === 'csv') yield CSV_HEADER;
  while (text !== undefined) {
    const next = read();
    yield text;
    text = await next;
  }
}

/** The ids of the export in batches of EXPORT_BATCH, asked of the index IDS_PER_QUESTION at a time, all up to the first answer's watermark. */
async function* batchesOfIds(source: ExportSource): AsyncGenerator<number[]> {
  let afterId = 0;
  let upTo: number | undefined;
  for (;;) {
    const found = await source.idsAfter(afterId, upTo, IDS_PER_QUESTION);
    upTo = found.upTo;
    for (let start = 0; start < found.ids.length; start += EXPORT_BATCH) yield found.ids.slice(start, start + EXPORT_BATCH);
    if (found.ids.length < IDS_PER_QUESTION) return;
    afterId = found.ids.at(-1)!;
  }
}

/** The text of the next batch, or undefined after the last. */
async function readBatch(source: ExportSource, format: ExportFormat, batches: AsyncGenerator<number[]>): Promise<Uint8Array | string | undefined> {
  const { value: ids, done } = await batches.next();
  if (done) return undefined;
  if (format === 'csv') {
    const rows = await source.entriesByIds(ids);
    checkIds(
      ids,
      rows.map((row) => row.id),
    );
    return rows.map((row) => csvRow(JSON.parse(withId(row.id, row.entry_json)))).join('');
  }
  const lines = await source.ndjsonByIds(ids);
  checkIds(ids, lineIds(lines));
  return lines;
}

// The database joins a batch's lines in the order its subquery reads them; checked here, with
// the count, so that neither a missing row nor a line out of order ever goes out unnoticed.
function checkIds(asked: number[], read: number[]): void {
  if (read.length !== asked.length) throw new Error(`the columnar index listed ${asked.length} conversions, the database holds ${read.length} of them`);
  for (let index = 0; index < asked.length; index++) {
    if (read[index] !== asked[index]) throw new Error(`the database read conversion ${read[index]} where the export expected ${asked[index]}`);
  }
}

const ID_PREFIX = '{"id":';
const NEWLINE = 10;

/** The id of each line of NDJSON text whose lines begin `{"id":<id>,` (withId in entry-json.ts). */
export function lineIds(lines: Uint8Array | string): number[] {
  const text = typeof lines === 'string' ? Buffer.from(lines) : Buffer.from(lines.buffer, lines.byteOffset, lines.byteLength);
  const ids: number[] = [];
  for (let start = 0; start < text.length; ) {
    let at = start + ID_PREFIX.length;
    let id = 0;
    for (let digit = text[at]! - 48; digit >= 0 && digit <= 9; digit = text[++at]! - 48) id = id * 10 + digit;
    ids.push(id);
    const end = text.indexOf(NEWLINE, at);
    start = end < 0 ? text.length : end + 1;
  }
  return ids;
}
