import { Type, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { columnTypeOf } from '../filters/catalogue.js';
import { parseTimestamp } from '../filters/timestamps.js';
import { entryJsonOf } from './entry-json.js';
import type { NewConversion } from './repository.js';
import { ConversionEntry } from './schema.js';

const REQUIRED = new Set(['created_at', 'cart_integration', 'receipt']);
const ARRAYS = new Set(['products', 'tracking_codes', 'affiliate_payouts']);

/**
 * What an imported record may hold: the entry's fields without `id`, where every field but
 * the three that identify and date a conversion may be left out (decisions §9).
 */
const importProperties: Record<string, TSchema> = {};
for (const [name, schema] of Object.entries(ConversionEntry.properties)) {
  if (name === 'id') continue;
  importProperties[name] = REQUIRED.has(name) ? schema : Type.Optional(schema);
}
const ImportRecord = Type.Object(importProperties, { additionalProperties: false });
const checkImportRecord = Compile(ImportRecord);

export const IMPORT_COLUMNS = Object.keys(importProperties);
/**
 * The longest text value, and tracking code, in bytes of UTF-8: most text columns are indexed,
 * as are tracking codes, and PostgreSQL refuses an index entry over 2,704 bytes (2,048 Chinese
 * characters, 6,144 bytes, failed the whole import there and not on SQLite).
 */
export const MAX_TEXT_BYTES = 2048;

export type ValidationResult = { row: NewConversion } | { problems: string[] };

/** Checks one imported record and turns it into a row, or says everything wrong with it. */
export function validateConversion(record: unknown): ValidationResult {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    return { problems: ['a conversion is a JSON object'] };
  }
  const problems = checkImportRecord.Check(record) ? [] : describeErrors(checkImportRecord.Errors(record));
  const input = record as Record<string, any>;
  const createdAt = typeof input.created_at === 'string' ? parseTimestamp(input.created_at) : undefined;
  if (typeof input.created_at === 'string' && createdAt === undefined) {
    problems.push('created_at must be an RFC 3339 timestamp such as 2026-11-22T11:59:51Z');
  }
  for (const [name, value] of Object.entries(input)) {
    const problem = Array.isArray(value) ? value.map(textProblem).find((found) => found !== undefined) : textProblem(value);
    if (problem) problems.push(`${name} ${problem}`);
  }
  if (problems.length > 0) return { problems: [...new Set(problems)] };
  return { row: toRow(input, createdAt!) };
}

/** What keeps a text value (or a tracking code) out of the database, if anything. */
function textProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // A UTF-16 unit takes at most 3 bytes of UTF-8: only long text needs counting.
  if (value.length * 3 > MAX_TEXT_BYTES && Buffer.byteLength(value) > MAX_TEXT_BYTES) {
    return `is longer than ${MAX_TEXT_BYTES} bytes of UTF-8 (a character outside ASCII takes 2 to 4)`;
  }
  // PostgreSQL's text cannot hold it.
  if (value.includes('\u0000')) return 'contains the NUL character (U+0000), which text cannot hold';
  return undefined;
}

function toRow(input: Record<string, any>, createdAt: number): NewConversion {
  const row: Record<string, unknown> = {};
  for (const name of IMPORT_COLUMNS) {
    const value = input[name];
    if (ARRAYS.has(name)) row[name] = JSON.stringify(value ?? []);
    else if (name === 'mobile') row[name] = value === undefined || value === null ? null : Number(value);
    else row[name] = value ?? null;
  }
  row.created_at = createdAt;
  row.entry_json = entryJsonOf(row as unknown as NewConversion);
  return row as unknown as NewConversion;
}

/** TypeBox reports every branch of a nullable union; keep the most useful message per field. */
function describeErrors(errors: Iterable<{ keyword: string; instancePath: string; message: string; params: any }>): string[] {
  const byField = new Map<string, string>();
  for (const error of errors) {
    if (error.keyword === 'anyOf' || (error.keyword === 'type' && error.params?.type === 'null')) continue;
    if (error.keyword === 'boolean') continue;
    const field = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
    const message =
      error.keyword === 'additionalProperties'
        ? `unknown field ${error.params.additionalProperties.join(', ')}`
        : error.keyword === 'required'
          ? `${error.params.requiredProperties?.join(', ') ?? 'a required field'} is required`
          : `${field} ${error.message}`;
    if (!byField.has(field + error.keyword)) byField.set(field + error.keyword, message);
  }
  return byField.size > 0 ? [...byField.values()] : ['the record does not match the conversion schema'];
}

/**
 * A CSV cell is text: empty means absent, array columns hold JSON (`["a","b"]`), numbers and
 * booleans are read by their column's type. Returns the record to validate, or problems.
 */
export function fromCsvRecord(cells: Record<string, string>): { record: Record<string, unknown> } | { problems: string[] } {
  const record: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, cell] of Object.entries(cells)) {
    if (cell === '') continue;
    const schema = importProperties[name];
    const type = schema ? columnTypeOf(schema) : undefined;
    if (ARRAYS.has(name)) {
      try {
        record[name] = JSON.parse(cell);
      } catch {
        problems.push(`${name} must be a JSON array such as ["a","b"]`);
      }
    } else if (type === 'integer' || type === 'number') {
      record[name] = /^-?\d+(\.\d+)?$/.test(cell.trim()) ? Number(cell) : cell;
    } else if (type === 'boolean') {
      record[name] = BOOLEAN_CELLS[cell.trim().toLowerCase()] ?? cell;
    } else {
      record[name] = cell;
    }
  }
  return problems.length > 0 ? { problems } : { record };
}

const BOOLEAN_CELLS: Record<string, boolean> = { t: true, true: true, '1': true, f: false, false: false, '0': false };
