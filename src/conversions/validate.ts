import { Type, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { columnTypeOf, jsonFieldsOf } from '../filters/catalogue.js';
import { isWritableTime, parseTimestamp } from '../filters/timestamps.js';
import { entryJsonOf } from './entry-json.js';
import type { NewConversion } from './repository.js';
import { CART_INTEGRATIONS, ConversionEntry, MAX_MONEY, PAYMENT_METHODS } from './schema.js';

const REQUIRED = new Set(['created_at', 'cart_integration', 'receipt']);

/**
 * What an imported record may hold: the entry's fields without `id`, where every field but
 * the three that identify and date a conversion (`created_at`, `cart_integration`, `receipt`) may
 * be left out (docs/command-line.md, "Importing conversions").
 */
const importProperties: Record<string, TSchema> = {};
for (const [name, schema] of Object.entries(ConversionEntry.properties)) {
  if (name === 'id') continue;
  importProperties[name] = REQUIRED.has(name) ? schema : Type.Optional(schema);
}
/**
 * The record as the compiled check sees it: `created_at` only a string, since parseTimestamp
 * reads it and says when it is no timestamp, and unknown fields left to validateConversion's walk
 * of the record, which finds them by name: TypeBox checked both a second time, with regular
 * expressions that took their share of an import's time (docs/performance.md).
 */
const checkedProperties: Record<string, TSchema> = { ...importProperties, created_at: Type.String() };
/**
 * A field an imported record may carry and the import ignores: acds's own export (the entries of
 * GET /api/v1/conversions, one a line) has each conversion's id, and so do other systems'
 * exports, while every imported conversion gets an id of its own.
 */
export const IGNORED_FIELD = 'id';
const checkImportRecord = Compile(Type.Object({ ...checkedProperties, [IGNORED_FIELD]: Type.Optional(Type.Unknown()) }));

export const IMPORT_COLUMNS = Object.keys(importProperties);
const IMPORT_FIELDS: ReadonlySet<string> = new Set(IMPORT_COLUMNS);
// A time as the entry's schema takes it (format date-time), with its offset: parseTimestamp, which
// reads filters' times too, also takes one without, or with a space for the T.
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
/** The array columns, which a CSV cell holds as JSON. */
const ARRAYS: ReadonlySet<string> = new Set(
  jsonFieldsOf(ConversionEntry)
    .filter(({ name, kind }) => kind === 'json' && name in importProperties)
    .map(({ name }) => name),
);
/**
 * The longest text value, and tracking code, in bytes of UTF-8: the receipt is in a unique
 * index, and PostgreSQL refuses an index entry over 2,704 bytes (2,048 Chinese characters, 6,144
 * bytes, failed the whole import there and not on SQLite); one limit for every text keeps the
 * rule simple to state.
 */
export const MAX_TEXT_BYTES = 2048;

/** A row to insert, and whether the record carried the ignored field; or everything wrong with the record. */
export type ValidationResult = { row: NewConversion; ignoredId: boolean } | { problems: string[] };

/** Checks one imported record and turns it into a row, or says everything wrong with it. */
export function validateConversion(record: unknown): ValidationResult {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    return { problems: [`the line must be one JSON object, such as ${EXAMPLE_RECORD}`] };
  }
  const problems = checkImportRecord.Check(record) ? [] : describeErrors(checkImportRecord.Errors(record));
  const input = record as Record<string, any>;
  const createdAt = typeof input.created_at === 'string' && RFC_3339.test(input.created_at) ? parseTimestamp(input.created_at) : undefined;
  if (typeof input.created_at === 'string' && createdAt === undefined) problems.push(mustBe('created_at'));
  if (createdAt !== undefined && !isWritableTime(createdAt)) problems.push('created_at must lie from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z in UTC');
  const unknown: string[] = [];
  for (const name in input) {
    if (name === IGNORED_FIELD) continue;
    if (!IMPORT_FIELDS.has(name)) {
      unknown.push(name);
      continue;
    }
    const value: unknown = input[name];
    const problem = Array.isArray(value) ? firstTextProblem(value) : textProblem(value);
    if (problem) problems.push(Array.isArray(value) ? `every value of ${name} ${problem}` : `${name} ${problem}`);
  }
  if (unknown.length > 0) problems.push(unknownFields('', unknown));
  if (problems.length > 0) return { problems: [...new Set(problems)] };
  return { row: toRow(input, createdAt!), ignoredId: input[IGNORED_FIELD] !== undefined };
}

function firstTextProblem(values: unknown[]): string | undefined {
  for (const value of values) {
    const problem = textProblem(value);
    if (problem) return problem;
  }
  return undefined;
}

/** What keeps a text value (or a tracking code) out of the database, if anything. */
function textProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // A UTF-16 unit takes at most 3 bytes of UTF-8: only long text needs counting.
  if (value.length * 3 > MAX_TEXT_BYTES && Buffer.byteLength(value) > MAX_TEXT_BYTES) {
    return `must be at most ${MAX_TEXT_BYTES} bytes of UTF-8 (a character outside ASCII takes 2 to 4)`;
  }
  // PostgreSQL's text cannot hold it.
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000), which text cannot hold';
  return undefined;
}

function toRow(input: Record<string, unknown>, createdAt: number): NewConversion {
  return {
    created_at: createdAt,
    cart_integration: input.cart_integration as string,
    receipt: input.receipt as string,
    user_id: (input.user_id as string | undefined) ?? null,
    entry_json: entryJsonOf(input, createdAt),
  };
}

const EXAMPLE_PRODUCT = '{"sku":"SKU-1","price":19.99,"qty":1}';
const EXAMPLE_RECORD = '{"created_at":"2026-11-22T11:59:51Z","cart_integration":"clickbank","receipt":"R-1001"}';
const PRODUCT_FIELDS = ['sku', 'price', 'qty'];

/** "a, b or c": the values a field takes, as a person would list them. */
function listOf(values: readonly string[], conjunction: 'and' | 'or'): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} ${conjunction} ${values.at(-1)}`;
}

const MONEY = `a number such as 19.99, from -${MAX_MONEY} to ${MAX_MONEY}`;
/**
 * What a field must be, said as the API's 400s say it: what would be right, with an example.
 * Whatever check a value fails (type, pattern, list, range, count), this one sentence tells
 * how to write it. Fields not named here take the sentence of their type.
 */
const EXPECTED: Record<string, string> = {
  created_at: 'an RFC 3339 timestamp such as 2026-11-22T11:59:51Z',
  cart_integration: `one of ${listOf(CART_INTEGRATIONS, 'or')}`,
  payment_method: listOf(PAYMENT_METHODS, 'or'),
  page_version: 'one lower-case letter, a to z',
  currency: 'three upper-case letters such as USD',
  country: 'two upper-case letters such as US',
  email: 'an e-mail address such as buyer@example.com',
  page_id: `a whole number such as 42, from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`,
  amount: MONEY,
  tax_amount: MONEY,
  shipping_amount: MONEY,
  products: `a JSON array of at most 100 products such as [${EXAMPLE_PRODUCT}]`,
  tracking_codes: 'a JSON array of at most 100 strings such as ["tc-facebook"]',
  affiliate_payouts: `a JSON array of at most 100 numbers such as [4.5], each from -${MAX_MONEY} to ${MAX_MONEY}`,
  'products[]': `an object of ${listOf(PRODUCT_FIELDS, 'and')} such as ${EXAMPLE_PRODUCT}`,
  'products[].sku': 'a string of at most 2048 characters',
  'products[].price': MONEY,
  'products[].qty': 'a whole number of at least 0, such as 1',
};
const EXPECTED_OF_TYPE: Record<string, string> = {
  integer: 'a whole number such as 42',
  number: 'a number such as 19.99',
  boolean: 'true or false',
  string: 'a string',
  timestamp: EXPECTED.created_at!,
};

/** `products.0.sku` for people: `products[0].sku`. */
function displayPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment, index) => (/^\d+$/.test(segment) ? `[${segment}]` : index === 0 ? segment : `.${segment}`))
    .join('');
}

/** "<field> must be <what would be right>", for a field by its path in the record. */
function mustBe(path: string): string {
  const pattern = path.replace(/\[\d+\]/g, '[]');
  const schema = importProperties[pattern];
  const expected = EXPECTED[pattern] ?? (schema && EXPECTED_OF_TYPE[columnTypeOf(schema) ?? '']);
  if (expected !== undefined) return `${path} must be ${expected}`;
  // An element of a list is told what its list must be.
  const list = /^(.*)\[\d+\]$/.exec(path)?.[1];
  return list !== undefined ? mustBe(list) : `${path} does not match the conversion schema`;
}

/** TypeBox reports every branch of a nullable union and every check a value fails; say each field's problem once. */
function describeErrors(errors: Iterable<{ keyword: string; instancePath: string; params: any }>): string[] {
  const problems = new Set<string>();
  for (const error of errors) {
    const path = displayPath(error.instancePath);
    if (error.keyword === 'required') {
      for (const name of error.params.requiredProperties ?? []) problems.add(`${path ? `${path}.` : ''}${name} is required`);
    } else if (error.keyword === 'additionalProperties') {
      problems.add(unknownFields(path, error.params.additionalProperties));
    } else if (error.keyword !== 'anyOf' && error.keyword !== 'boolean') {
      problems.add(mustBe(path));
    }
  }
  return problems.size > 0 ? [...problems] : ['the record does not match the conversion schema'];
}

function unknownFields(path: string, names: string[]): string {
  const fields = `field${names.length === 1 ? '' : 's'} ${names.join(', ')}`;
  return path === ''
    ? `unknown ${fields}: the fields of a conversion are ${listOf(IMPORT_COLUMNS, 'and')}`
    : `${path} has the unknown ${fields}: the fields of a product are ${listOf(PRODUCT_FIELDS, 'and')}`;
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
        problems.push(mustBe(name));
      }
    } else if (type === 'integer' || type === 'number') {
      record[name] = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(cell.trim()) ? Number(cell) : cell;
    } else if (type === 'boolean') {
      record[name] = BOOLEAN_CELLS[cell.trim().toLowerCase()] ?? cell;
    } else {
      record[name] = cell;
    }
  }
  return problems.length > 0 ? { problems } : { record };
}

const BOOLEAN_CELLS: Record<string, boolean> = { t: true, true: true, '1': true, f: false, false: false, '0': false };
