import { type Insertable, type Kysely, sql } from 'kysely';
import type { EngineSql } from '../db/adapter.js';
import { CompiledOnce, insertParameters } from '../db/compiled-once.js';
import type { ConversionsTable, DatabaseSchema } from '../db/schema.js';
import { PAGE_SIZE } from '../filters/list.js';
import { withId } from './entry-json.js';

export type NewConversion = Omit<Insertable<ConversionsTable>, 'id' | 'account_id'>;

/** The largest id of any account's conversion, 0 without any: a statement, or a part of one. */
function largestIdQuery(db: Kysely<DatabaseSchema>) {
  return db.selectFrom('conversions').select(sql<number>`coalesce(max(id), 0)`.as('id'));
}

/** All SQL about conversions. */
export class ConversionRepository {
  /**
   * The statements built once per shape: a page's entries by its number of ids (asked by every
   * list page of conversions), an import's batch by its size and columns (some 10,000 values,
   * whose compiling cost as much as parsing the batch's rows), and the writes of a group of cart
   * notifications by its size.
   */
  private readonly compiled: CompiledOnce;

  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly engineSql: EngineSql,
  ) {
    this.compiled = new CompiledOnce(db, 'conversions');
  }

  /**
   * The stored entry JSON (entry-json.ts) of the account's conversions with these ids, in
   * ascending id order.
   *
   * This and the other reads by id find rows by id alone, then keep the account's: given the
   * account as a condition, SQLite could read the whole account through an index that begins
   * with it instead, which it chose for a batch of 2,000 ids, since its sampled statistics
   * (refreshStatistics) count an account's rows far too few, or none before the first analysis.
   */
  async entriesByIds(accountId: number, ids: number[]): Promise<{ id: number; entry_json: string }[]> {
    if (ids.length === 0) return [];
    const query = () => this.db.selectFrom('conversions').select(['id', 'account_id', 'entry_json']).where('id', 'in', ids).orderBy('id');
    const { rows } = await this.compiled.execute(`entries of ${ids.length}`, query, ids);
    return (rows as { id: number; account_id: number; entry_json: string }[])
      .filter((row) => Number(row.account_id) === accountId)
      .map(({ id, entry_json }) => ({ id, entry_json }));
  }

  /**
   * A page's entries: the whole entry (withId in entry-json.ts) of each of the account's
   * conversions with these ids, in ascending id order, comma-separated (the inside of a JSON
   * array), and how many were found. Where the engine joins pages of text
   * (EngineSql.joinsTextPages), joined by the database into one value, so that a page crosses
   * between threads and into the response as bytes, not as an object and a string a row.
   */
  async pageJsonByIds(accountId: number, ids: number[]): Promise<{ found: number; json: Uint8Array | string }> {
    if (ids.length === 0) return { found: 0, json: '' };
    if (!this.engineSql.joinsTextPages) {
      const rows = await this.entriesByIds(accountId, ids);
      return { found: rows.length, json: rows.map((row) => withId(row.id, row.entry_json)).join(',') };
    }
    const query = () => pageJsonQuery(this.db, this.engineSql.textAsBytes, accountId, ids);
    const { rows } = await this.compiled.execute(`page of ${ids.length}`, query, [accountId, accountId, ...ids]);
    return { found: Number(rows[0]!.found), json: rows[0]!.json };
  }

  /**
   * How many of the account's conversions belong to the buyer `userId`, and the ids of page
   * `page` of them, in ascending order: both through the index of the account and `user_id`.
   */
  async buyerPage(accountId: number, userId: string, page: number): Promise<{ total: number; ids: number[] }> {
    const matching = this.db.selectFrom('conversions').where('account_id', '=', accountId).where('user_id', '=', userId);
    const { total } = await matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
    const ids = await matching
      .select('id')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .offset((page - 1) * PAGE_SIZE)
      .execute();
    return { total: Number(total), ids: ids.map((row) => row.id) };
  }

  /**
   * The account's conversions with these ids as NDJSON, each line the whole entry (withId in
   * entry-json.ts), in ascending id order. Where the engine joins pages of text
   * (EngineSql.joinsTextPages), joined by the database into one value, so that an export moves
   * one value a batch between threads, not an object a row; else read a row each and written
   * into one buffer, never joined into one string, which at a batch's size V8 would make in its
   * old space at once.
   */
  async ndjsonByIds(accountId: number, ids: number[]): Promise<Uint8Array | string> {
    if (ids.length === 0) return '';
    if (!this.engineSql.joinsTextPages) {
      const rows = await this.entriesByIds(accountId, ids);
      return Buffer.concat(rows.map((row) => Buffer.from(`${withId(row.id, row.entry_json)}\n`)));
    }
    const lines = this.db
      .selectFrom('conversions')
      .select(['account_id', sql<string>`'{"id":' || id || ',' || substr(entry_json, 2) || ${'\n'}`.as('line')])
      .where('id', 'in', ids)
      .orderBy('id')
      .as('lines');
    const row = await this.db
      .selectFrom(lines)
      .select(this.engineSql.textAsBytes(sql<string>`coalesce(string_agg(line, '') filter (where account_id = ${accountId}), '')`).as('lines'))
      .executeTakeFirstOrThrow();
    return row.lines;
  }

  /**
   * Marks a change to the account's conversions; call it inside the transaction that makes the
   * change, after its writes. The account's newest id becomes the largest in the table, which
   * none of its conversions exceeds: the same as its own largest when the transaction wrote only
   * its rows (an import), since writes are serialized (Database.serializeConversionWrites).
   */
  async bumpVersion(accountId: number): Promise<void> {
    const largestId = largestIdQuery(this.db);
    const bump = () =>
      this.db
        .insertInto('conversion_versions')
        .values({ account_id: accountId, version: 1, newest_id: largestId })
        .onConflict((oc) =>
          oc.column('account_id').doUpdateSet((eb) => ({ version: eb('conversion_versions.version', '+', 1), newest_id: eb.ref('excluded.newest_id') })),
        );
    await this.compiled.execute('bump version', bump, [accountId, 1, 1]);
  }

  /** The largest id of any account's conversion; 0 without any. */
  async largestId(): Promise<number> {
    return Number((await largestIdQuery(this.db).executeTakeFirstOrThrow()).id);
  }

  /** Up to `limit` ids of any account's conversions after `afterId`, in order. */
  async idsAfter(afterId: number, limit: number): Promise<number[]> {
    const rows = await this.db.selectFrom('conversions').select('id').where('id', '>', afterId).orderBy('id').limit(limit).execute();
    return rows.map((row) => Number(row.id));
  }

  /**
   * Up to `limit` conversions of every account after id `afterId`, in id order, each an array of
   * its id, account and `columns`: as the columnar index reads its source (an import's advance copy).
   */
  async rowsAfter(afterId: number, limit: number, columns: readonly string[]): Promise<unknown[][]> {
    const names = ['id', 'account_id', ...columns];
    const rows = await this.db
      .selectFrom('conversions')
      .select(names as (keyof ConversionsTable)[])
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((row) => names.map((name) => (row as Record<string, unknown>)[name]));
  }

  /**
   * Marks, in the import's transaction, that the rows from `firstId` to `lastId` are its advance
   * copy's, `token`, in place of the marks of the imports before it. A mark is read once, by the
   * index that took the copy in, right after the commit; imports take turns, so one before this
   * has been read already, or its index drops the rows it took in and catches them up from the
   * database instead.
   */
  async markImport(token: string, firstId: number, lastId: number): Promise<void> {
    await this.db.deleteFrom('conversion_imports').execute();
    await this.db.insertInto('conversion_imports').values({ token, first_id: firstId, last_id: lastId }).execute();
  }

  /**
   * Inserts rows that are not there yet, identified by (account, cart_integration, receipt).
   * Returns how many were new. Every row has the first one's fields (validateConversion makes
   * them so). Call it inside a transaction that began with Database.serializeConversionWrites.
   */
  async insertNew(accountId: number, rows: NewConversion[]): Promise<number> {
    if (rows.length === 0) return 0;
    // A receipt given twice in one batch is one conversion, whichever the database meets first.
    const byKey = new Map<string, NewConversion>();
    for (const row of rows) {
      const key = `${row.cart_integration}\n${row.receipt}`;
      if (!byKey.has(key)) byKey.set(key, row);
    }
    const unique = [...byKey.values()];
    const columns = Object.keys(unique[0]!) as (keyof NewConversion)[];
    const parameters: unknown[] = [];
    for (const row of unique) {
      parameters.push(accountId);
      for (const column of columns) parameters.push(row[column] ?? null);
    }
    // Kept prepared: PostgreSQL planned a batch's 1,500 parameters anew for every batch of an import.
    const inserted = await this.compiled.execute(
      `insert ${unique.length}:${columns.join(',')}`,
      () => insertQuery(this.db, this.engineSql, ['account_id', ...columns], unique.length),
      parameters,
      { keepPrepared: true },
    );
    return Number(inserted.numAffectedRows ?? 0);
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
    const { columns, parameters } = insertParameters(rows);
    const { rows: inserted } = await this.compiled.execute(
      `insert each ${rows.length}:${columns.join(',')}`,
      () => insertQuery(this.db, this.engineSql, columns, rows.length).returning(['id', 'account_id', 'cart_integration', 'receipt']),
      parameters,
    );
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

/** pageJsonByIds's statement: its parameters are the account's id twice, then the ids. */
function pageJsonQuery(db: Kysely<DatabaseSchema>, textAsBytes: EngineSql['textAsBytes'], accountId: number, ids: number[]) {
  const entries = db
    .selectFrom('conversions')
    .select(['account_id', sql<string>`'{"id":' || id || ',' || substr(entry_json, 2)`.as('entry')])
    .where('id', 'in', ids)
    .orderBy('id')
    .as('entries');
  const ofTheAccount = sql`filter (where account_id = ${accountId})`;
  return db
    .selectFrom(entries)
    .select([sql<number>`count(*) ${ofTheAccount}`.as('found'), textAsBytes(sql<string>`coalesce(string_agg(entry, ',') ${ofTheAccount}, '')`).as('json')]);
}

/** The insert of `count` rows of these columns that skips a row whose account, cart and receipt are there already: its parameters are each row's values in the columns' order, row after row. */
function insertQuery(db: Kysely<DatabaseSchema>, { skipExisting }: EngineSql, columns: (keyof Insertable<ConversionsTable>)[], count: number) {
  const template = Object.fromEntries(columns.map((column) => [column, null])) as unknown as Insertable<ConversionsTable>;
  const insert = db.insertInto('conversions').values(Array.from({ length: count }, () => template));
  return skipExisting(insert, ['account_id', 'cart_integration', 'receipt']);
}
