import { formatTimestamp } from '../filters/timestamps.js';
import type { Selectable } from 'kysely';
import type { AssetsTable } from '../db/schema.js';
import type { AssetEntry } from './schema.js';

/** An asset's row as stored (the repository reads and writes these). */
export type AssetRow = Selectable<AssetsTable>;

/** An asset as the API writes it (AssetEntry). `publicBase` is the account's public URL prefix. */
export function toEntry(row: Omit<AssetRow, 'entry_json'>, publicBase: string): AssetEntry {
  return {
    id: row.id,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
    name: row.name,
    folder: row.folder,
    image: row.image === 1,
    video: row.video === 1,
    script: row.script === 1,
    style: row.style === 1,
    text: row.text === 1,
    width: row.width,
    height: row.height,
    url: row.url,
    async: row.async === 1,
    defer: row.defer === 1,
    size: row.size,
    content_type: row.content_type,
    public_url: row.blob_key ? publicBase + row.public_id : null,
  };
}

/**
 * The entry as stored with the row (assets.entry_json), written by every insert and update, so
 * that a list page is read rather than built: all of it but the id, which the database assigns,
 * and the public URL, which depends on PUBLIC_URL (listedEntry adds both).
 */
export function storedEntryJson(row: Omit<AssetRow, 'id' | 'entry_json'>): string {
  const { id: _id, public_url: _publicUrl, ...stored } = toEntry({ ...row, id: 0 }, '');
  return JSON.stringify(stored);
}

/** The whole entry from its stored JSON: the id first and the public URL last, as the schema has them. */
export function listedEntry(asset: Pick<AssetRow, 'id' | 'blob_key' | 'public_id' | 'entry_json'>, publicBase: string): string {
  const publicUrl = asset.blob_key ? JSON.stringify(publicBase + asset.public_id) : 'null';
  return `{"id":${asset.id},${asset.entry_json.slice(1, -1)},"public_url":${publicUrl}}`;
}
