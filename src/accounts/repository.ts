import type { Kysely, Selectable } from 'kysely';
import { CompiledOnce } from '../db/compiled-once.js';
import type { AccountsTable, ApiKeysTable, DatabaseSchema } from '../db/schema.js';

export type Account = Selectable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;

/** All SQL about accounts and their keys. */
export class AccountRepository {
  private readonly compiled: CompiledOnce;

  constructor(private readonly db: Kysely<DatabaseSchema>) {
    this.compiled = new CompiledOnce(db, 'accounts');
  }

  findByName(name: string): Promise<Account | undefined> {
    return this.db.selectFrom('accounts').selectAll().where('name', '=', name).executeTakeFirst();
  }

  /**
   * Creates the account unless it exists (also when another process creates it first). It reads
   * first, so that every start of the service after the first writes nothing: on SQLite a write
   * waits for the one writer, an import holds it to its end, and the start would fail.
   */
  async ensure(name: string, handle: string, now: number): Promise<Account> {
    const existing = await this.findByName(name);
    if (existing) return existing;
    await this.db
      .insertInto('accounts')
      .values({ name, handle, created_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const account = await this.findByName(name);
    if (!account) throw new Error(`account ${name} vanished while being created`);
    return account;
  }

  /**
   * Adds the key unless it is there, revoked or not (reading first, as `ensure` does); one already
   * there gets `prefix` as its prefix, which an earlier version may have kept longer in clear.
   */
  async addKey(accountId: number, prefix: string, keyHash: string, now: number): Promise<void> {
    const there = await this.db.selectFrom('api_keys').select(['id', 'prefix']).where('key_hash', '=', keyHash).executeTakeFirst();
    if (there) {
      // Written only when it differs: on SQLite any write waits for the file's one writer.
      if (there.prefix !== prefix) await this.db.updateTable('api_keys').set({ prefix }).where('id', '=', there.id).execute();
      return;
    }
    await this.db
      .insertInto('api_keys')
      .values({ account_id: accountId, prefix, key_hash: keyHash, created_at: now, revoked_at: null })
      .onConflict((oc) => oc.column('key_hash').doNothing())
      .execute();
  }

  /**
   * The account of an active key, its data version, and the id none of its conversions lies
   * above, by the key's hash (a unique index). The version is the sum of the assets' and the
   * conversions' counters: each only ever grows, so the sum changes with every change to either.
   */
  async accountForKey(keyHash: string): Promise<{ account_id: number; data_version: number; newest_conversion_id: number } | undefined> {
    // Built once: every request asks it.
    const { rows } = await this.compiled.execute('accountForKey', () => accountForKeyQuery(this.db, keyHash), [keyHash]);
    return rows[0];
  }

  /** Marks a change to the account's assets; call it inside the transaction that makes the change. */
  async bumpDataVersion(accountId: number): Promise<void> {
    await this.db
      .updateTable('accounts')
      .set((eb) => ({ data_version: eb('data_version', '+', 1) }))
      .where('id', '=', accountId)
      .execute();
  }

  async exists(id: number): Promise<boolean> {
    return (await this.db.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }

  async removeIfEmpty(id: number): Promise<void> {
    await this.db
      .deleteFrom('accounts')
      .where('id', '=', id)
      .where(({ exists, not, or, selectFrom }) =>
        not(
          or([
            exists(selectFrom('api_keys').select('id').where('account_id', '=', id)),
            exists(selectFrom('assets').select('id').where('account_id', '=', id)),
            exists(selectFrom('conversions').select('id').where('account_id', '=', id)),
          ]),
        ),
      )
      .execute();
  }

  listKeys(accountId: number): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  }

  keysWithPrefix(prefix: string): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).execute();
  }

  async revokeKey(id: number, now: number): Promise<void> {
    await this.db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  }
}

/** accountForKey's statement: its one parameter is the key's hash. */
function accountForKeyQuery(db: Kysely<DatabaseSchema>, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .leftJoin('conversion_versions', 'conversion_versions.account_id', 'api_keys.account_id')
    .select((eb) => [
      'api_keys.account_id',
      eb('accounts.data_version', '+', eb.fn.coalesce('conversion_versions.version', eb.lit(0))).as('data_version'),
      eb.fn.coalesce('conversion_versions.newest_id', eb.lit(0)).as('newest_conversion_id'),
    ])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null);
}
