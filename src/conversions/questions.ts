import path from 'node:path';
import type { Config } from '../config.js';
import { ColumnarIndex } from '../db/columnar/columnar-index.js';
import type { Database } from '../db/database.js';
import { conversionCatalogue } from './schema.js';

// A catch-up is also made before any question after a write; this one finds an import done elsewhere.
const POLL_MS = 1000;
// Nicer than the service: catching up after a large import yields the processor to requests.
const NICENESS = 10;

/**
 * What the columnar index of conversions holds: the filterable columns, the e-mail address as a
 * hash (a summary counts distinct buyers), and which columns are indexed for lookup.
 */
export const CONVERSION_INDEX_LAYOUT = {
  table: 'conversions',
  columns: [...conversionCatalogue.values()].filter((column) => column.name !== 'id'),
  hashed: ['email'],
  // The row keeps its time as epoch seconds; every other column is read from its entry.
  sourceLayout: { rowColumns: ['created_at'], document: 'entry_json' },
  // One buyer's conversions, asked by landing pages and support: found without a scan.
  pointLookups: ['user_id', 'zip_code'],
};

/**
 * The columnar index that answers questions about conversions (counts and the ids of a page):
 * on the embedded default a DuckDB file beside the SQLite files, kept across restarts; with
 * PostgreSQL one of this instance's own, built at start, so that instances stay disposable.
 */
export function openConversionQuestions(config: Config, database: Database, log: (message: string) => void): ColumnarIndex {
  return new ColumnarIndex(
    {
      file: database.engine === 'sqlite' ? path.join(config.dataDir, 'conversions.duckdb') : undefined,
      source: database.conversionSource,
      ...CONVERSION_INDEX_LAYOUT,
      memoryLimit: `${config.columnar.memoryMiB}MB`,
      threads: config.columnar.threads,
      pollMs: POLL_MS,
      niceness: NICENESS,
    },
    log,
  );
}
