import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely';

/**
 * The leading comment of a statement to be kept prepared on its connection: a driver that
 * prepares statements by name acts on it (PostgreSQL's, postgres/database.ts), and SQLite's,
 * which keeps every statement it runs prepared, passes it over as the comment it is. Mark writes
 * only: SQLite's driver tells a read by its first word, and would send a marked one to the writer.
 */
export const KEEP_PREPARED = '/* kept prepared */ ';

/**
 * Statements whose SQL Kysely builds once per shape (a key naming what changes it: how many ids,
 * which columns) and which then run with new parameters, in the order the SQL takes them: for
 * statements asked on every request or every batch of an import, where building the query was
 * much of their cost (a list page's, with its 100 parameters, was what a cached page's request
 * allocated most of). `build` must bind every value as a parameter, never write one into the
 * SQL. One instance per repository and database.
 */
export class CompiledOnce<Key> {
  private readonly texts = new Map<Key, string>();

  constructor(private readonly db: Kysely<any>) {}

  /**
   * Runs the statement of shape `key`, built by `build` the first time that shape is asked.
   * `keepPrepared` marks it to be parsed and planned once per connection (KEEP_PREPARED): for a
   * statement of few shapes run over and over on one connection, since each shape stays prepared
   * for as long as its connection lives.
   */
  execute<Row>(key: Key, build: () => Compilable<Row>, parameters: unknown[], { keepPrepared = false } = {}): Promise<QueryResult<Row>> {
    let text = this.texts.get(key);
    if (text === undefined) {
      text = `${keepPrepared ? KEEP_PREPARED : ''}${build().compile().sql}`;
      this.texts.set(key, text);
    }
    return this.db.executeQuery<Row>(CompiledQuery.raw(text, parameters));
  }
}
