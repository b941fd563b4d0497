import type { Kysely } from 'kysely';
import type { Database, JsonField } from '../database.js';

// Frozen with the migration: asset entry fields as the API wrote them when it was made, without
// the id and the public URL (src/assets/entry.ts).
const ASSET_ENTRY_FIELDS: JsonField[] = [
  { name: 'created_at', kind: 'timestamp' },
  { name: 'updated_at', kind: 'timestamp' },
  { name: 'name', kind: 'plain' },
  { name: 'folder', kind: 'plain' },
  { name: 'image', kind: 'boolean' },
  { name: 'video', kind: 'boolean' },
  { name: 'script', kind: 'boolean' },
  { name: 'style', kind: 'boolean' },
  { name: 'text', kind: 'boolean' },
  { name: 'width', kind: 'plain' },
  { name: 'height', kind: 'plain' },
  { name: 'url', kind: 'plain' },
  { name: 'async', kind: 'boolean' },
  { name: 'defer', kind: 'boolean' },
  { name: 'size', kind: 'plain' },
  { name: 'content_type', kind: 'plain' },
];

/**
 * assets.entry_json: each asset as the API writes it (but for its id and public URL), written
 * by every insert and update, so that a list page is read rather than built field by field
 * (the benchmark's S6, assets by folder, in docs/performance.md). Assets made before are filled
 * in here by the database itself.
 */
export function assetEntriesMigration(database: Pick<Database, 'jsonObject'>) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('assets').addColumn('entry_json', 'text').execute();
      await db
        .updateTable('assets')
        .set({ entry_json: database.jsonObject('assets', ASSET_ENTRY_FIELDS) })
        .execute();
    },
  };
}
