/**
 * What the database alone takes to hold the imported conversions with every index: the rows are
 * copied into an empty copy of the conversions table by one INSERT ... SELECT (no reading,
 * checking or building of rows, no client at all), the quickest order kept: the rows first, then
 * each secondary index built over them, as an import's bulk load does on SQLite. An import
 * through the service cannot be faster than this, whatever its code does, so the benchmark prints
 * it beside the import's own rate and target.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../src/db/database.js';

const COPY = 'bench_floor';

export async function engineFloorSeconds({ db, engine, conversionsSchema }: Database): Promise<number> {
  const { createTable, createIndexes } = engine === 'sqlite' ? await sqliteDefinitions(db, conversionsSchema!) : await postgresDefinitions(db);
  await sql.raw(createTable).execute(db);
  try {
    const began = performance.now();
    await db.transaction().execute(async (trx) => {
      await sql`insert into ${sql.table(COPY)} select * from conversions`.execute(trx);
      for (const statement of createIndexes) await sql.raw(statement).execute(trx);
    });
    return (performance.now() - began) / 1000;
  } finally {
    await sql`drop table ${sql.table(conversionsSchema ? `${conversionsSchema}.${COPY}` : COPY)}`.execute(db);
  }
}

/**
 * SQLite: the table as it stands (its primary key and unique constraint, whose indexes are kept
 * while rows go in, as in an import), and its secondary indexes as SQLite stored them, all in the
 * conversions' own file.
 */
async function sqliteDefinitions(db: Kysely<any>, schema: string) {
  const { rows } = await sql<{ type: string; sql: string }>`
    select type, sql from ${sql.raw(schema)}.sqlite_master where tbl_name = 'conversions' and sql is not null`.execute(db);
  const renamed = (text: string) => text.replace(/"conversions/g, `"${COPY}`).replace(/^(CREATE (?:UNIQUE )?(?:TABLE|INDEX) )/i, `$1${schema}.`);
  return {
    createTable: renamed(rows.find((row) => row.type === 'table')!.sql),
    createIndexes: rows.filter((row) => row.type === 'index').map((row) => renamed(row.sql)),
  };
}

/** PostgreSQL: the columns alone, then every index, primary key and unique one included. */
async function postgresDefinitions(db: Kysely<any>) {
  const { rows } = await sql<{ indexdef: string }>`
    select indexdef from pg_indexes where schemaname = current_schema() and tablename = 'conversions'`.execute(db);
  return {
    createTable: `create table ${COPY} (like conversions including defaults)`,
    createIndexes: rows.map((row) => row.indexdef.replace(/INDEX conversions/, `INDEX ${COPY}`).replace(/ ON \S*conversions /, ` ON ${COPY} `)),
  };
}
