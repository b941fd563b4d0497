import type { Insertable, Kysely, Selectable } from 'kysely';
import type { ConversionsTable, DatabaseSchema } from '../db/schema.js';
import { listRows, type AccountList, type ListPage } from '../filters/list.js';
import type { ListQuery } from '../filters/parse.js';

export type ConversionRow = Selectable<ConversionsTable>;
export type NewConversion = Omit<Insertable<ConversionsTable>, 'id' | 'account_id'>;

/** All SQL about conversions. */
export class ConversionRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** One page of ids with their stored entry JSON (entry-json.ts). */
  listJson(list: AccountList): Promise<ListPage<{ id: number; entry_json: string }>> {
    // Every column index of conversions carries created_at (migration 0005).
    return listRows({ ...list, db: this.db, table: 'conversions', indexesCarry: 'created_at' }, (rows) =>
      rows.select(['conversions.id', 'conversions.entry_json']),
    );
  }

  /** Marks a change to the account's conversions; call it inside the transaction that makes the change. */
  async bumpVersion(accountId: number): Promise<void> {
    await this.db
      .insertInto('conversion_versions')
      .values({ account_id: accountId, version: 1 })
      .onConflict((oc) => oc.column('account_id').doUpdateSet((eb) => ({ version: eb('conversion_versions.version', '+', 1) })))
      .execute();
  }

  /** The number of conversions of every account, or a little more (the largest id): read at once, not counted. */
  async approximateRowCount(): Promise<number> {
    const { largest } = await this.db.selectFrom('conversions').select((eb) => eb.fn.max('id').as('largest')).executeTakeFirstOrThrow();
    return Number(largest ?? 0);
  }

  /**
   * Inserts rows that are not there yet, identified by (account, cart_integration, receipt),
   * with their tracking codes. Returns how many were new. Give the repository a transaction
   * so that rows and codes go in together.
   */
  async insertNew(accountId: number, rows: NewConversion[]): Promise<number> {
    if (rows.length === 0) return 0;
    const byKey = new Map<string, NewConversion>();
    for (const row of rows) {
      const key = `${row.cart_integration}\n${row.receipt}`;
      if (!byKey.has(key)) byKey.set(key, row);
    }
    const inserted = await this.db
      .insertInto('conversions')
      .values([...byKey.values()].map((row) => ({ ...row, account_id: accountId })))
      .onConflict((oc) => oc.columns(['account_id', 'cart_integration', 'receipt']).doNothing())
      .returning(['id', 'cart_integration', 'receipt'])
      .execute();
    const codes = inserted.flatMap(({ id, cart_integration, receipt }) => {
      const row = byKey.get(`${cart_integration}\n${receipt}`);
      const unique = new Set<string>(row ? JSON.parse(row.tracking_codes) : []);
      return [...unique].map((code) => ({ conversion_id: id, account_id: accountId, code }));
    });
    if (codes.length > 0) await this.db.insertInto('conversion_tracking_codes').values(codes).execute();
    return inserted.length;
  }
}
