import { type Insertable, type Kysely, sql } from 'kysely';
import type { Database } from '../db/adapter.js';
import type { ConversionsTable, DatabaseSchema } from '../db/schema.js';

export type NewConversion = Omit<Insertable<ConversionsTable>, 'id' | 'account_id'>;

/** All SQL about conversions. */
export class ConversionRepository {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly textAsBytes: Database['textAsBytes'] = (text) => text,
  ) {}

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

  /**
   * The account's conversions with these ids, each the whole entry (withId in entry-json.ts), in
   * ascending id order, joined into one value by the database (`found` says how many): NDJSON
   * lines for an export, or comma-separated for a list page's array. One value a page or batch
   * moves between threads, not an object a row, and goes out as it is.
   */
  async joinedEntriesByIds(accountId: number, ids: number[], joinedAs: 'ndjson' | 'commas'): Promise<{ found: number; joined: Uint8Array | string }> {
    if (ids.length === 0) return { found: 0, joined: '' };
    const entry = sql<string>`'{"id":' || id || ',' || substr(entry_json, 2)`;
    const joined = joinedAs === 'ndjson' ? sql<string>`string_agg(${entry} || ${'\n'}, '' ORDER BY id)` : sql<string>`string_agg(${entry}, ',' ORDER BY id)`;
    const row = await this.db
      .selectFrom('conversions')
      .select((eb) => [eb.fn.countAll<number | string>().as('found'), this.textAsBytes(sql<string>`coalesce(${joined}, '')`).as('joined')])
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .executeTakeFirstOrThrow();
    return { found: Number(row.found), joined: row.joined };
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
   * Inserts each conversion unless its account has its cart and receipt already; returns, in the
   * order of `rows`, the id of the conversion with each one's account, cart and receipt, new or
   * not. Call it inside a transaction that began with Database.serializeConversionWrites.
   */
  async insertEach(rows: (NewConversion & { account_id: number })[]): Promise<number[]> {
    if (rows.length === 0) return [];
    const keyOf = (row: { account_id: number | string; cart_integration: string; receipt: string }) =>
      `${row.account_id}\n${row.cart_integration}\n${row.receipt}`;
    const idByKey = new Map<string, number>();
    const inserted = await this.db
      .insertInto('conversions')
      .values(rows)
      .onConflict((oc) => oc.columns(['account_id', 'cart_integration', 'receipt']).doNothing())
      .returning(['id', 'account_id', 'cart_integration', 'receipt'])
      .execute();
    for (const row of inserted) idByKey.set(keyOf(row), Number(row.id));
    const there = rows.filter((row) => !idByKey.has(keyOf(row)));
    if (there.length > 0) {
      const found = await this.db
        .selectFrom('conversions')
        .select(['id', 'account_id', 'cart_integration', 'receipt'])
        .where((eb) =>
          eb(
            eb.refTuple('account_id', 'cart_integration', 'receipt'),
            'in',
            there.map((row) => eb.tuple(row.account_id, row.cart_integration, row.receipt)),
          ),
        )
        .execute();
      for (const row of found) idByKey.set(keyOf(row), Number(row.id));
    }
    return rows.map((row) => idByKey.get(keyOf(row))!);
  }
}
