import type { Kysely, Updateable } from 'kysely';
import type { AssetsTable, DatabaseSchema } from '../db/schema.js';
import { listRows, type AccountList, type ListPage } from '../filters/list.js';
import { storedEntryJson, type AssetRow } from './entry.js';

export type { AssetRow };
// Every column but those the repository writes itself.
export type NewAssetRow = Omit<AssetRow, 'id' | 'entry_json'>;
export type AssetChanges = Updateable<AssetsTable>;
export type ListedAsset = Pick<AssetRow, 'id' | 'blob_key' | 'public_id' | 'entry_json'>;

/** All SQL about assets and the journal of blobs that may have lost their row. */
export class AssetRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** One page of assets, with their stored entry JSON and what their public URLs are made of. */
  listJson(list: AccountList): Promise<ListPage<ListedAsset>> {
    return listRows<ListedAsset>({ ...list, db: this.db, table: 'assets' }, (rows) =>
      rows.select(['assets.id', 'assets.blob_key', 'assets.public_id', 'assets.entry_json']),
    );
  }

  find(accountId: number, id: number): Promise<AssetRow | undefined> {
    return this.db.selectFrom('assets').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  }

  findPublic(handle: string, publicId: string): Promise<AssetRow | undefined> {
    return this.db
      .selectFrom('assets')
      .innerJoin('accounts', 'accounts.id', 'assets.account_id')
      .selectAll('assets')
      .where('accounts.handle', '=', handle)
      .where('assets.public_id', '=', publicId)
      .executeTakeFirst();
  }

  async handleOf(accountId: number): Promise<string> {
    const { handle } = await this.db.selectFrom('accounts').select('handle').where('id', '=', accountId).executeTakeFirstOrThrow();
    return handle;
  }

  async insert(row: NewAssetRow): Promise<number> {
    const { id } = await this.db
      .insertInto('assets')
      .values({ ...row, entry_json: storedEntryJson(row) })
      .returning('id')
      .executeTakeFirstOrThrow();
    return id;
  }

  /**
   * Updates the asset `current` if it is still as read: the same bytes, and the same entry, which
   * holds every other column. Says whether it did.
   */
  async update(current: AssetRow, changes: Omit<AssetChanges, 'entry_json'>): Promise<boolean> {
    // Kysely leaves a column whose new value is undefined as it is; so must the stored entry.
    const changed = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    const result = await this.db
      .updateTable('assets')
      .set({ ...changes, entry_json: storedEntryJson({ ...current, ...changed }) })
      .where('account_id', '=', current.account_id)
      .where('id', '=', current.id)
      .where('blob_key', current.blob_key === null ? 'is' : '=', current.blob_key)
      .where('entry_json', '=', current.entry_json)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Deletes the asset; gives the key of the bytes it had as it was deleted (null for a remote asset), or undefined when there was none. */
  async delete(accountId: number, id: number): Promise<{ blob_key: string | null } | undefined> {
    return this.db.deleteFrom('assets').where('account_id', '=', accountId).where('id', '=', id).returning('blob_key').executeTakeFirst();
  }

  /** A folder exists while it, or a folder below it, holds an asset of the account. */
  async folderExists(accountId: number, folder: string): Promise<boolean> {
    if (folder === '') return true;
    // Below `a/b` is every path from `a/b/` up to (not including) `a/b0`: '0' follows '/'.
    const row = await this.db
      .selectFrom('assets')
      .select('id')
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('folder', '=', folder), eb.and([eb('folder', '>=', `${folder}/`), eb('folder', '<', `${folder}0`)])]))
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async journalBlob(blobKey: string, now: number): Promise<void> {
    await this.db
      .insertInto('blob_journal')
      .values({ blob_key: blobKey, created_at: now })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** Takes `blobKey` off the journal; false when it was not on it (a sweep took it first). */
  async forgetBlob(blobKey: string): Promise<boolean> {
    const result = await this.db.deleteFrom('blob_journal').where('blob_key', '=', blobKey).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Takes `blobKey` off the journal if no asset uses it; true when it did, and the bytes may go. */
  async claimOrphan(blobKey: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('blob_journal')
      .where('blob_key', '=', blobKey)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('assets').select('assets.id').whereRef('assets.blob_key', '=', 'blob_journal.blob_key'))))
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Journalled blobs older than `before` that no asset points at. */
  async orphanedBlobs(before: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('blob_journal')
      .select('blob_key')
      .where('created_at', '<', before)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('assets').select('assets.id').whereRef('assets.blob_key', '=', 'blob_journal.blob_key'))))
      .execute();
    return rows.map((row) => row.blob_key);
  }
}
