// Small pure helpers the receivers share: reading a request's fields, turning a cart's text into
// a conversion's values, and the replies carts expect.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { TSchema } from 'typebox';
import { ConversionEntry } from '../../conversions/schema.js';
import { columnTypeOf } from '../../filters/catalogue.js';
import { offsetAt } from '../../db/columnar/time-zones.js';
import { formatTimestamp, parseTimestamp } from '../../filters/timestamps.js';
import { type CartReply, type CartRequest, type EventType, PURCHASES } from '../notification.js';

/** A request's fields by name; a name sent twice keeps its last value, as PHP's `$_POST` does. */
export type Fields = ReadonlyMap<string, string>;

/** A conversion as `conversions import` takes it (every field but `id` may be left out here). */
export type ConversionRecord = Record<string, unknown>;
type ConversionField = Exclude<keyof ConversionEntry, 'id'>;

// ---------------------------------------------------------------------------------------------
// Reading what was sent

/**
 * The fields of an `application/x-www-form-urlencoded` body, decoded as PHP decodes `$_POST`:
 * `+` is a space, `%XX` a byte of UTF-8, and a repeated name keeps its last value. Signatures
 * are computed over these decoded values, so the decoding must be exactly PHP's.
 */
export function formFields(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) fields.set(name, value);
  return fields;
}

/** The fields of a query string as the framework parsed it (a repeated name is an array: its last value wins). */
export function queryFields(query: CartRequest['query']): Map<string, string> {
  const fields = new Map<string, string>();
  for (const [name, value] of Object.entries(query)) {
    const last = Array.isArray(value) ? value.at(-1) : value;
    if (last !== undefined) fields.set(name, last);
  }
  return fields;
}

/** The query string again, from the parsed query: what a GET notification carried. */
export function queryString(query: CartRequest['query']): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) params.append(name, one);
  }
  return params.toString();
}

/**
 * The fields of a notification whatever its transport: the query string, and for a POST or PUT
 * the body's too (a form, or JSON when the body starts with `{`), the body winning. Carts whose
 * postbacks the seller maps by hand send any of these.
 */
export function requestFields(request: CartRequest): { fields: Fields } | { problem: string } {
  const fields = queryFields(request.query);
  if (request.method === 'GET') return { fields };
  const body = request.rawBody.toString('utf8');
  if (body.trimStart().startsWith('{')) {
    const json = parseJsonObject(body);
    if (json === undefined)
      return { problem: `the body starts with { but is not one JSON object nested at most ${MAX_JSON_DEPTH} deep: send a form, or valid JSON` };
    for (const [name, value] of Object.entries(json)) {
      const text = jsonText(value);
      if (text !== undefined) fields.set(name, text);
    }
  } else {
    for (const [name, value] of formFields(body)) fields.set(name, value);
  }
  return { fields };
}

/** A JSON value as the text a form would have carried: objects and arrays as JSON, null as nothing. */
function jsonText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** Parses text that must be one JSON object, nested at most MAX_JSON_DEPTH deep; undefined when it is not. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const value = parseJson(text);
  return isObject(value) ? value : undefined;
}

/**
 * How deep JSON in a notification may nest: carts send flat fields, a product list at most.
 * Deeper values would be written back as text by recursion, which thousands of levels exhaust.
 */
export const MAX_JSON_DEPTH = 32;

/** JSON text's value, or undefined when the text is not JSON or nests deeper than MAX_JSON_DEPTH. */
function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  // Level by level, without recursion.
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > MAX_JSON_DEPTH) return undefined;
    const below: unknown[] = [];
    for (const item of level) if (typeof item === 'object' && item !== null) for (const inner of Object.values(item)) below.push(inner);
    level = below;
  }
  return value;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The notification's content as text: the body, or the query string when nothing came in the body (a GET). */
export function payloadOf(request: CartRequest): string {
  return request.method === 'GET' || request.rawBody.length === 0 ? queryString(request.query) : request.rawBody.toString('utf8');
}

/** The first of `names` that carries a value; an empty value is no value. */
export function first(fields: Fields, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = fields.get(name);
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}

/** A JSON value read as text: a non-empty string, or a number as written in decimal; anything else is absent. */
export function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * A key for a notification that carries no id of its own: a digest of its content, so that a
 * retry (the same content) is still recognised as one.
 */
export function contentKey(payload: string): string {
  return `sha256:${createHash('sha256').update(payload).digest('hex').slice(0, 32)}`;
}

// ---------------------------------------------------------------------------------------------
// Values

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A number from a cart's text ("12.50" → 12.5). Text that is not a number is kept as it was, so
 * that the import's checks name the field ("amount must be a number") instead of it vanishing.
 */
export function numberOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return DECIMAL.test(value.trim()) ? Number(value) : value;
}

/** A page id: a number when the text is a whole number, else the text, which the import's checks then name. */
export function pageIdOf(value: unknown): unknown {
  const number = numberOf(value);
  return typeof number === 'number' && Number.isInteger(number) ? number : value;
}

const TRUE_TEXT = new Set(['1', 'true', 'yes', 'y', 'on']);
const FALSE_TEXT = new Set(['0', 'false', 'no', 'n', 'off']);

/** A flag from a cart's text ("1", "true", "yes"); other text is kept as it was, for the import's checks to name. */
export function booleanOf(value: string | undefined): boolean | string | undefined {
  if (value === undefined) return undefined;
  const word = value.trim().toLowerCase();
  return TRUE_TEXT.has(word) ? true : FALSE_TEXT.has(word) ? false : value;
}

/** Whether a cart's test flag is set (`is_test=1`, `test=true`). */
export function isSet(value: string | undefined): boolean {
  return booleanOf(value) === true;
}

/**
 * Our payment method from a cart's word for it: PayPal (`paypal`, ClickBank's `PYPL`, "PayPal
 * Express") or, for every other way of paying a cart names, a card. Absent or `N/A`: left out.
 */
export function paymentMethodOf(value: string | undefined): 'creditcard' | 'paypal' | undefined {
  if (value === undefined || /^\s*(n\/?a)?\s*$/i.test(value)) return undefined;
  return /paypal|^pypl$/i.test(value.trim()) ? 'paypal' : 'creditcard';
}

/** A currency code in upper case ("usd" → "USD"). */
export function currencyOf(value: string | undefined): string | undefined {
  return value?.trim().toUpperCase();
}

/** The user agents of phones and tablets. */
export function isMobileAgent(userAgent: string): boolean {
  return /Mobi|Android|iPhone|iPad/i.test(userAgent);
}

/** The non-empty values in order, each once. */
export function distinct(values: readonly (string | undefined)[]): string[] {
  return [...new Set(values.filter((value): value is string => value !== undefined && value !== ''))];
}

// ---------------------------------------------------------------------------------------------
// Countries

/** How a country's name is compared: no accents, lower case, "and" as "&" and "Saint" as "St." as the English names write them. */
function countryKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[’‘`]/g, "'")
    .replace(/\band\b/g, '&')
    .replace(/\bsaint\b/g, 'st.')
    .replace(/\s+/g, ' ')
    .trim();
}

// Region codes that name groups of countries or test locales, not a buyer's country.
const NOT_COUNTRIES = new Set(['EU', 'EZ', 'UN', 'QO', 'XA', 'XB', 'ZZ']);

/** Other ways buyers and carts write a country, beside the English names ICU knows. */
const COUNTRY_ALIASES: Record<string, string> = {
  usa: 'US',
  'u.s.a.': 'US',
  'u.s.': 'US',
  'united states of america': 'US',
  america: 'US',
  uk: 'GB',
  'u.k.': 'GB',
  'great britain': 'GB',
  britain: 'GB',
  england: 'GB',
  scotland: 'GB',
  wales: 'GB',
  'northern ireland': 'GB',
  'the netherlands': 'NL',
  holland: 'NL',
  'czech republic': 'CZ',
  turkey: 'TR',
  'ivory coast': 'CI',
  'korea, republic of': 'KR',
  'republic of korea': 'KR',
  'russian federation': 'RU',
  'viet nam': 'VN',
  'hong kong': 'HK',
  macau: 'MO',
  macao: 'MO',
  swaziland: 'SZ',
  macedonia: 'MK',
  burma: 'MM',
  myanmar: 'MM',
  vatican: 'VA',
  palestine: 'PS',
  'democratic republic of the congo': 'CD',
  'republic of the congo': 'CG',
  'cape verde': 'CV',
  'cabo verde': 'CV',
};

/**
 * Country names to codes: ICU's English name of every two-letter region code, lower case, and
 * the aliases. Codes ICU keeps only as old spellings (DD for Germany, UK for GB) are skipped
 * so that each name maps to the current code.
 */
const COUNTRY_BY_NAME: ReadonlyMap<string, string> = (() => {
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const byName = new Map<string, string>();
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  for (const a of letters) {
    for (const b of letters) {
      const code = a + b;
      if (NOT_COUNTRIES.has(code) || Intl.getCanonicalLocales(`und-${code}`)[0] !== `und-${code}`) continue;
      const name = names.of(code);
      if (name !== undefined && name !== code) byName.set(countryKey(name), code);
    }
  }
  for (const [alias, code] of Object.entries(COUNTRY_ALIASES)) byName.set(countryKey(alias), code);
  return byName;
})();

/**
 * A buyer's country as two upper-case letters, from a code ("us") or an English name ("United
 * States", "USA"). A name not known is kept as it was, for the import's checks to name.
 */
export function countryOf(value: string | undefined): string | undefined {
  const text = value?.trim();
  if (text === undefined || text === '') return undefined;
  const named = COUNTRY_BY_NAME.get(countryKey(text));
  if (named !== undefined) return named;
  return /^[A-Za-z]{2}$/.test(text) ? text.toUpperCase() : text;
}

// ---------------------------------------------------------------------------------------------
// Times

const ISO_BASIC = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * An ISO 8601 time with its offset, in either form: extended (`2017-09-26T13:38:12-07:00`) or
 * basic (`20200913T120536-0700`); epoch seconds, or undefined.
 */
export function epochOfIso8601(text: string): number | undefined {
  const basic = ISO_BASIC.exec(text.trim());
  if (!basic) return parseTimestamp(text.trim());
  const [, y, mo, d, h, mi, s, offset = 'Z'] = basic;
  const extendedOffset = offset === 'Z' ? 'Z' : `${offset.slice(0, 3)}:${offset.slice(-2)}`;
  return parseTimestamp(`${y}-${mo}-${d}T${h}:${mi}:${s}${extendedOffset}`);
}

const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}$/;

/** A wall-clock time without an offset (`2019-11-08 13:15:08`) read in `timeZone`; epoch seconds, or undefined. */
export function epochOfLocalTime(text: string, timeZone: string): number | undefined {
  if (!LOCAL_TIME.test(text.trim())) return undefined;
  const asUtc = parseTimestamp(text.trim());
  if (asUtc === undefined) return undefined;
  const format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
  // The zone's offset at the time read as UTC is at most one change away from the right one:
  // correcting once with the offset found there lands on it (in a gap, on the hour after).
  const guess = asUtc - offsetAt(format, asUtc);
  return asUtc - offsetAt(format, guess);
}

/**
 * When a purchase happened, as the conversion's `created_at` and the notification's
 * `occurredAt`: the cart's own time read by `read`, else the time it was received. A time the
 * cart sent but that cannot be read is kept as it was, for the import's checks to name.
 */
export function timesOf(
  text: string | undefined,
  read: (text: string) => number | undefined,
  receivedAt: number,
): { createdAt: string; occurredAt: number | undefined } {
  if (text === undefined) return { createdAt: formatTimestamp(receivedAt), occurredAt: undefined };
  const occurredAt = read(text);
  return occurredAt === undefined ? { createdAt: text, occurredAt } : { createdAt: formatTimestamp(occurredAt), occurredAt };
}

// ---------------------------------------------------------------------------------------------
// The funnel's own values, carried through the cart

export const PASS_THROUGH = ['user_id', 'page_id', 'page_version', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content'] as const;
export type PassThroughName = (typeof PASS_THROUGH)[number];

/**
 * The funnel's values that travel through a cart as parameters named as our fields, with or
 * without a `__` prefix (the prefixed name wins: it is the one the funnel set on purpose).
 * `prefixedOnly` reads only the prefixed names, for carts that use our names for their own
 * values; `fallbacks` are the cart's other names for a field, read last.
 */
export function passThrough(
  get: (name: string) => string | undefined,
  options: { prefixedOnly?: boolean; fallbacks?: Partial<Record<PassThroughName, string>> } = {},
): ConversionRecord {
  const record: ConversionRecord = {};
  for (const name of PASS_THROUGH) {
    const fallback = options.fallbacks?.[name];
    const value = get(`__${name}`) ?? (options.prefixedOnly ? undefined : get(name)) ?? (fallback === undefined ? undefined : get(fallback));
    if (value !== undefined) record[name] = name === 'page_id' ? pageIdOf(value) : value;
  }
  return record;
}

// ---------------------------------------------------------------------------------------------
// Conversions from fields named by the seller

/** How a field's text becomes the conversion's value. */
type Kind = 'text' | 'number' | 'integer' | 'boolean' | 'country' | 'currency' | 'payment_method' | 'list' | 'numbers' | 'products';

/** The text fields whose values a receiver normalises: a country's name to its code, a currency and a payment method to the API's words. */
const NORMALISED: Partial<Record<string, Kind>> = { country: 'country', currency: 'currency', payment_method: 'payment_method' };

/** A field's kind, from its type in the conversion's schema. */
function kindOf(name: string, property: TSchema): Kind {
  const normalised = NORMALISED[name];
  if (normalised) return normalised;
  switch (columnTypeOf(property)) {
    case 'integer':
      return 'integer';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'stringArray':
      return 'list';
    case 'string':
      return 'text';
    default:
      // The arrays that are not of text: products (objects) and affiliate payouts (numbers).
      return name === 'products' ? 'products' : 'numbers';
  }
}

/** Every field of a conversion but `created_at` and `cart_integration`, which receivers set themselves, with its kind. */
const KINDS = Object.fromEntries(
  Object.entries(ConversionEntry.properties)
    .filter(([name]) => !['id', 'created_at', 'cart_integration'].includes(name))
    .map(([name, property]) => [name, kindOf(name, property)]),
) as Record<Exclude<ConversionField, 'created_at' | 'cart_integration'>, Kind>;
export type MappedField = keyof typeof KINDS;

/** Where each field is read from: the names to try in order (for a list, every name adds its values). */
export type FieldSources = Partial<Record<MappedField, readonly string[]>>;

/**
 * A conversion from a notification whose fields the seller named when setting up the postback:
 * each field from the first of its names that carries a value, each list from all of them.
 * Pass-through fields are left to `passThrough`, whose prefix rules differ.
 */
export function recordFromFields(fields: Fields, sources: FieldSources): ConversionRecord {
  const record: ConversionRecord = {};
  for (const [field, names] of Object.entries(sources) as [MappedField, readonly string[]][]) {
    const kind = KINDS[field];
    const value = kind === 'list' || kind === 'numbers' ? listOf(fields, field, names, kind) : converted(kind, first(fields, ...names));
    if (value !== undefined) record[field] = value;
  }
  return record;
}

/** Every field's own name first, then the cart's names for it. */
export function withOurNames(cartNames: FieldSources): FieldSources {
  const sources: FieldSources = {};
  for (const field of Object.keys(KINDS) as MappedField[]) {
    if ((PASS_THROUGH as readonly string[]).includes(field)) continue;
    sources[field] = [field, ...(cartNames[field] ?? [])];
  }
  return sources;
}

function converted(kind: Kind, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  switch (kind) {
    case 'number':
      return numberOf(text);
    case 'integer':
      return pageIdOf(text);
    case 'boolean':
      return booleanOf(text);
    case 'country':
      return countryOf(text);
    case 'currency':
      return currencyOf(text);
    case 'payment_method':
      return paymentMethodOf(text);
    case 'products':
      return parseJsonList(text) ?? text;
    default:
      return text;
  }
}

/**
 * A list from several fields, each value once. The cart's fields (`c1`, `subid`) hold one value
 * each; ours (`tracking_codes`) a JSON array or values separated by commas, so that
 * `c1=fb&c2=ads` and `tracking_codes=fb,ads` give the same list. Empty: left out.
 */
function listOf(fields: Fields, field: MappedField, names: readonly string[], kind: 'list' | 'numbers'): unknown[] | undefined {
  const values: string[] = [];
  for (const name of names) {
    const text = first(fields, name);
    if (text === undefined) continue;
    const list = name === field ? (parseJsonList(text) ?? text.split(',')) : [text];
    values.push(...list.map((value) => (typeof value === 'string' ? value.trim() : String(value))));
  }
  const list = distinct(values);
  if (list.length === 0) return undefined;
  return kind === 'numbers' ? list.map(numberOf) : list;
}

function parseJsonList(text: string): unknown[] | undefined {
  if (!text.trimStart().startsWith('[')) return undefined;
  const value = parseJson(text);
  return Array.isArray(value) ? value : undefined;
}

/** The record without the fields a notification did not carry: undefined, null, empty text and empty lists. */
export function compact(record: ConversionRecord): ConversionRecord {
  const kept: ConversionRecord = {};
  for (const [name, value] of Object.entries(record)) {
    if (value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)) continue;
    kept[name] = value;
  }
  return kept;
}

/** A purchase's conversion; other events (refunds, cancellations, tests) have none. */
export function conversionFor(event: EventType, record: ConversionRecord): ConversionRecord | undefined {
  return PURCHASES.has(event) ? compact(record) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Secrets and replies

/** Whether two secrets or signatures are the same, in time that does not depend on where they differ. */
export function sameSecret(received: string, expected: string): boolean {
  const a = Buffer.from(received, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function textReply(status: number, body: string): CartReply {
  return { status, contentType: 'text/plain; charset=utf-8', body };
}

export function jsonReply(status: number, value: unknown): CartReply {
  return { status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(value) };
}

/** The replies of carts that sign nothing: `OK`; a wrong token is the service's 404 before they read anything. */
export const UNSIGNED_REPLIES = {
  accepted: (): CartReply => textReply(200, 'OK'),
};
