import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely';

/**
 * The leading comment of a statement to be kept prepared on its connection: a driver that
 * prepares statements by name acts on it (PostgreSQL's, postgres/database.ts), and SQLite's,
 * which keeps every statement it runs prepared, passes it over as the comment it is. Mark writes
 * only: SQLite's driver tells a read by its first word, and would send a marked one to the writer.
 */
export const KEEP_PREPARED = '/* kept prepared */ ';

/**
 * The SQL texts built so far, by database: a database and its transactions share one adapter,
 * and so the texts, however many repositories are made for transactions along the way.
 */
const textsByDatabase = new WeakMap<object, Map<string, string>>();

/**
 * Statements whose SQL Kysely builds once per shape (a key naming what changes it: how many ids,
 * which columns) and which then run with new parameters, in the order the SQL takes them: for
 * statements asked on every request, every batch of an import or every group of cart
 * notifications, where building the query was much of their cost (a list page's, with its 100
 * parameters, was what a cached page's request allocated most of). `build` must bind every value
 * as a parameter, never write one into the SQL. The texts outlive the instance: a repository made
 * for one transaction finds the shapes built in earlier ones, under its `scope` (its own name
 * for its statements, which keeps two repositories' keys apart).
 */
export class CompiledOnce {
  private readonly texts: Map<string, string>;

  constructor(
    private readonly db: Kysely<any>,
    private readonly scope: string,
  ) {
    const adapter = db.getExecutor().adapter;
    let texts = textsByDatabase.get(adapter);
    if (!texts) {
      texts = new Map();
      textsByDatabase.set(adapter, texts);
    }
    this.texts = texts;
  }

  /**
   * Runs the statement of shape `key`, built by `build` the first time that shape is asked.
   * `keepPrepared` marks it to be parsed and planned once per connection (KEEP_PREPARED): for a
   * statement of few shapes run over and over on one connection, since each shape stays prepared
   * for as long as its connection lives.
   */
  execute<Row>(key: string, build: () => Compilable<Row>, parameters: unknown[], { keepPrepared = false } = {}): Promise<QueryResult<Row>> {
    const scoped = `${this.scope}\n${keepPrepared ? 'kept ' : ''}${key}`;
    let text = this.texts.get(scoped);
    if (text === undefined) {
      text = `${keepPrepared ? KEEP_PREPARED : ''}${build().compile().sql}`;
      this.texts.set(scoped, text);
    }
    return this.db.executeQuery<Row>(CompiledQuery.raw(text, parameters));
  }
}

/**
 * A multi-row insert's columns (the first row's) and parameters (each row's values in their
 * order, null where a row has none), for a statement built once per number of rows and columns.
 */
export function insertParameters<Row extends object>(rows: Row[]): { columns: (keyof Row)[]; parameters: unknown[] } {
  const columns = Object.keys(rows[0]!) as (keyof Row)[];
  return { columns, parameters: rows.flatMap((row) => columns.map((column) => row[column] ?? null)) };
}
