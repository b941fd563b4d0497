import { type Static, Type } from 'typebox';
import type { SummaryRows } from '../db/columnar/columnar-index.js';
import { MAX_SUMMARY_GROUPS, TIME_BUCKETS } from '../db/columnar/protocol.js';
import { badRequest } from '../errors.js';
import type { ColumnType, FilterColumn } from '../filters/catalogue.js';
import { type Filter, parseFilters, type RawQuery, single } from '../filters/parse.js';
import { conversionCatalogue } from './schema.js';

export const MAX_GROUP_KEYS = 3;
/** Parameters of a summary beside the list's filters. */
const SUMMARY_PARAMS = ['group_by', 'tz'];
// Columns whose values make groups: text, whole numbers, booleans, and each element of an array.
const GROUPABLE_TYPES: readonly ColumnType[] = ['string', 'integer', 'boolean', 'stringArray'];
const GROUPABLE_COLUMNS = [...conversionCatalogue.values()].filter((column) => column.name !== 'id' && GROUPABLE_TYPES.includes(column.type));

const money = (description: string) => Type.Number({ description: `${description}, rounded to cents` });
const Measures = {
  conversions: Type.Integer({ description: 'How many conversions' }),
  amount: money('The sum of amount'),
  tax_amount: money('The sum of tax_amount'),
  shipping_amount: money('The sum of shipping_amount'),
  average_amount: Type.Union([money('The average amount'), Type.Null()], { description: 'The average amount, rounded to cents; null without amounts' }),
  buyers: Type.Integer({ description: 'How many distinct e-mail addresses' }),
};
const GroupKeyValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

/** What the example data's spring sale brought from facebook on its first day: the example of the OpenAPI document. */
const EXAMPLE_MEASURES = { conversions: 2, amount: 166, tax_amount: 0, shipping_amount: 4.95, average_amount: 83, buyers: 1 };

/** The answer of GET /api/v1/conversions/summary. */
export const ConversionSummary = Type.Object(
  {
    groups: Type.Array(
      Type.Object({
        key: Type.Record(Type.String(), GroupKeyValue, {
          description: 'One property per group_by key: a time bucket as the local date of its start (an hour as YYYY-MM-DDTHH:00), a column as its value',
        }),
        ...Measures,
      }),
      { description: `In key order, at most ${MAX_SUMMARY_GROUPS}` },
    ),
    totals: Type.Object(Measures, { description: 'Over every matching conversion, each counted once' }),
  },
  {
    description: 'The sums of each group, in key order, and of every matching conversion',
    examples: [{ groups: [{ key: { day: '2026-03-01', utm_source: 'facebook' }, ...EXAMPLE_MEASURES }], totals: EXAMPLE_MEASURES }],
  },
);
export type ConversionSummary = Static<typeof ConversionSummary>;

/** What a summary asks: the list's filters, the keys to group by (time buckets or columns), the time zone of the buckets. */
export interface SummaryQuery {
  filters: Filter[];
  groupBy: string[];
  timeZone: string;
}

/** Reads a summary's query string, or throws a 400 that says what to fix. */
export function parseSummaryQuery(query: RawQuery): SummaryQuery {
  const filters = parseFilters(query, conversionCatalogue, SUMMARY_PARAMS);
  const groupBy = query.group_by === undefined ? [] : parseGroupBy(single('group_by', query.group_by));
  const timeZone = query.tz === undefined ? 'UTC' : parseTimeZone(single('tz', query.tz));
  return { filters, groupBy, timeZone };
}

function parseGroupBy(raw: string): string[] {
  const keys = raw.split(',').map((key) => key.trim());
  if (keys.length > MAX_GROUP_KEYS) throw badRequest(`group_by takes at most ${MAX_GROUP_KEYS} comma-separated keys`);
  for (const key of keys) {
    if (key === '')
      throw badRequest('group_by has an empty key; give comma-separated keys such as group_by=day,utm_source, or leave it out for one group of everything');
    if (!(TIME_BUCKETS as readonly string[]).includes(key) && !GROUPABLE_COLUMNS.some((column) => column.name === key)) {
      throw badRequest(
        `group_by has the unknown key ${key}; use a time bucket (${TIME_BUCKETS.join(', ')}) or one of: ${GROUPABLE_COLUMNS.map((column) => column.name).join(', ')}`,
      );
    }
    if (keys.indexOf(key) !== keys.lastIndexOf(key)) throw badRequest(`group_by names ${key} twice`);
  }
  return keys;
}

function parseTimeZone(raw: string): string {
  try {
    // A RangeError for a name that is not an IANA time zone; the name as ICU spells it otherwise.
    return new Intl.DateTimeFormat('en-US', { timeZone: raw }).resolvedOptions().timeZone;
  } catch {
    throw badRequest(`tz must be an IANA time zone such as Europe/Berlin or America/New_York, not ${raw.slice(0, 64)}`);
  }
}

/** The summary's JSON from the index's rows: keys named and typed as their columns, measures named. */
export function summaryOf(rows: SummaryRows, groupBy: string[]): ConversionSummary {
  if (rows.groups.length > MAX_SUMMARY_GROUPS) {
    throw badRequest(`the summary has more than ${MAX_SUMMARY_GROUPS} groups; narrow the filters or group by fewer or coarser keys`);
  }
  const columns = groupBy.map((name) => GROUPABLE_COLUMNS.find((column) => column.name === name));
  return {
    groups: rows.groups.map((row) => ({
      key: Object.fromEntries(groupBy.map((name, index) => [name, keyValue(row[index] ?? null, columns[index])])),
      ...measures(row.slice(groupBy.length)),
    })),
    totals: measures(rows.totals),
  };
}

/** A key as the entry writes its column: booleans are stored as 0 and 1. */
function keyValue(value: string | number | null, column: FilterColumn | undefined): string | number | boolean | null {
  return column?.type === 'boolean' && value !== null ? value === 1 : value;
}

function measures([conversions, amount, taxAmount, shippingAmount, averageAmount, buyers]: (string | number | null)[]): ConversionSummary['totals'] {
  return {
    conversions: Number(conversions),
    amount: Number(amount),
    tax_amount: Number(taxAmount),
    shipping_amount: Number(shippingAmount),
    average_amount: averageAmount === null || averageAmount === undefined ? null : Number(averageAmount),
    buyers: Number(buyers),
  };
}
