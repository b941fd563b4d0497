/**
 * @acds/client: the acds API from TypeScript or JavaScript, in Node 20+ and browsers.
 *
 *   const client = new AcdsClient({ baseUrl: 'https://acds.example.com', apiKey: process.env.ACDS_API_KEY });
 *   for await (const conversion of client.conversions.list({ utm_source: 'facebook', 'amount.gte': 50 })) ...
 *
 * Types come from the service's OpenAPI document (openapi.ts, generated: `npm run client:types`
 * in the service's repository).
 */
export {
  AcdsClient,
  type AcdsClientOptions,
  type AssetEntry,
  type AssetFields,
  type AssetFilters,
  type CartEventEntry,
  type CartEventFilters,
  type CartReceiverEntry,
  type ConversionEntry,
  type ConversionFilters,
  type ConversionSummary,
  type Page,
  type SummaryOptions,
} from './client.js';
export type { FileInput } from './multipart.js';
export { AcdsError, type RequestOptions } from './transport.js';
export type { components, operations, paths } from './openapi.js';
