import type { Insertable, Kysely } from 'kysely';
import type { ConversionsTable, DatabaseSchema } from '../db/schema.js';

export type NewConversion = Omit<Insertable<ConversionsTable>, 'id' | 'account_id'>;

/** All SQL about conversions. */
export class ConversionRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** The stored entry JSON (entry-json.ts) of the account's conversions with these ids, in ascending id order. */
  async entriesByIds(accountId: number, ids: number[]): Promise<{ id: number; entry_json: string }[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom('conversions')
      .select(['id', 'entry_json'])
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .orderBy('id')
      .execute();
    return rows as { id: number; entry_json: string }[];
  }

  /** Marks a change to the account's conversions; call it inside the transaction that makes the change. */
  async bumpVersion(accountId: number): Promise<void> {
    await this.db
      .insertInto('conversion_versions')
      .values({ account_id: accountId, version: 1 })
      .onConflict((oc) => oc.column('account_id').doUpdateSet((eb) => ({ version: eb('conversion_versions.version', '+', 1) })))
      .execute();
  }

  /**
   * Inserts rows that are not there yet, identified by (account, cart_integration, receipt).
   * Returns how many were new. Call it inside a transaction that began with
   * Database.serializeConversionWrites.
   */
  async insertNew(accountId: number, rows: NewConversion[]): Promise<number> {
    if (rows.length === 0) return 0;
    // A receipt given twice in one batch is one conversion, whichever the database meets first.
    const byKey = new Map<string, NewConversion>();
    for (const row of rows) {
      const key = `${row.cart_integration}\n${row.receipt}`;
      if (!byKey.has(key)) byKey.set(key, row);
    }
    const inserted = await this.db
      .insertInto('conversions')
      .values([...byKey.values()].map((row) => ({ ...row, account_id: accountId })))
      .onConflict((oc) => oc.columns(['account_id', 'cart_integration', 'receipt']).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0);
  }

  /**
   * Inserts one conversion unless the account has its cart and receipt already; either way
   * returns the id of the conversion with that receipt. Call it inside a transaction that began
   * with Database.serializeConversionWrites.
   */
  async insertOne(accountId: number, row: NewConversion): Promise<{ id: number; created: boolean }> {
    const inserted = await this.db
      .insertInto('conversions')
      .values({ ...row, account_id: accountId })
      .onConflict((oc) => oc.columns(['account_id', 'cart_integration', 'receipt']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) return { id: Number(inserted.id), created: true };
    const existing = await this.db
      .selectFrom('conversions')
      .select('id')
      .where('account_id', '=', accountId)
      .where('cart_integration', '=', row.cart_integration)
      .where('receipt', '=', row.receipt)
      .executeTakeFirstOrThrow();
    return { id: Number(existing.id), created: false };
  }
}
