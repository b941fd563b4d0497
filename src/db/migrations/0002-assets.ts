import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../database.js';

const ASSET_INDEXED_COLUMNS = [
  'created_at',
  'updated_at',
  'name',
  'folder',
  'image',
  'video',
  'script',
  'style',
  'text',
  'width',
  'height',
  'url',
  'async',
  'defer',
];

export function assetsMigration(types: ColumnTypes) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('assets')
        .addColumn('id', types.autoIdType, types.autoId)
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('name', types.text, (c) => c.notNull())
        .addColumn('folder', types.text, (c) => c.notNull())
        .addColumn('image', 'integer', (c) => c.notNull())
        .addColumn('video', 'integer', (c) => c.notNull())
        .addColumn('script', 'integer', (c) => c.notNull())
        .addColumn('style', 'integer', (c) => c.notNull())
        .addColumn('text', 'integer', (c) => c.notNull())
        .addColumn('width', 'bigint')
        .addColumn('height', 'bigint')
        .addColumn('url', types.text)
        .addColumn('async', 'integer', (c) => c.notNull())
        .addColumn('defer', 'integer', (c) => c.notNull())
        // A local asset's bytes: where they are, and what they are.
        .addColumn('blob_key', types.text)
        .addColumn('size', 'bigint')
        .addColumn('content_type', types.text)
        .addColumn('etag', types.text)
        // Stable for the asset's life, so public URLs survive renames and moves.
        .addColumn('public_id', types.text, (c) => c.notNull().unique())
        .addUniqueConstraint('assets_account_folder_name', ['account_id', 'folder', 'name'])
        .execute();
      await db.schema.createIndex('assets_account_id').on('assets').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('assets_blob_key').on('assets').column('blob_key').execute();
      for (const column of ASSET_INDEXED_COLUMNS) {
        await db.schema.createIndex(`assets_account_${column}`).on('assets').columns(['account_id', column, 'id']).execute();
      }

      // Blobs that may have no row pointing at them: written before their row was committed, or
      // left behind by a replacement or a delete. The sweeper deletes those no asset uses.
      await db.schema
        .createTable('blob_journal')
        .addColumn('blob_key', types.text, (c) => c.primaryKey())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
