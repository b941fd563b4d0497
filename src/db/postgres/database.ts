import { createHash, randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, sql } from 'kysely';
import pg from 'pg';
import type { Database, EngineSql, JsonField } from '../adapter.js';
import { KEEP_PREPARED } from '../compiled-once.js';
import type { DatabaseSchema } from '../schema.js';

const INT8_OID = 20;
/** How values arrive from PostgreSQL: bigint ids and counts as numbers (strings by default); all of ours fit in a double. */
export const POSTGRES_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};
// The advisory lock that transactions inserting conversions take (serializeConversionWrites): "acds" in ASCII.
const CONVERSION_WRITES_LOCK = 0x61636473;
// The SQLSTATE of a statement cancelled, here by statement_timeout.
const QUERY_CANCELED = '57014';

/** Texts as text, since pg would decode a bytea from hex, pages of them a row each, and rows there already skipped by ON CONFLICT (Database.textAsBytes, joinsTextPages, skipExisting). */
export const postgresSql: EngineSql = {
  textAsBytes: (text) => text,
  joinsTextPages: false,
  skipExisting: (insert, columns) => insert.onConflict((oc) => oc.columns(columns).doNothing()),
};

/** The scaled-out configuration: a pool of connections to a PostgreSQL server. */
export function openPostgres(connectionString: string, poolSize: number, statementTimeoutMs: number | undefined): Database {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    ...(statementTimeoutMs === undefined ? {} : { statement_timeout: statementTimeoutMs }),
    types: POSTGRES_TYPES,
  });
  // An idle connection that the server ends (a restart, a failover) is dropped from the pool and
  // replaced by the next query; without a listener its 'error' would stop the process.
  pool.on('error', (error) => console.error(`PostgreSQL closed an idle connection: ${error.message}`));
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool: keepingMarkedStatementsPrepared(pool) }) });
  return {
    db,
    conversionSource: { engine: 'postgres', url: connectionString },
    serializeConversionWrites: async (trx) => {
      await sql`select pg_advisory_xact_lock(${CONVERSION_WRITES_LOCK})`.execute(trx);
    },
    engine: 'postgres',
    columnTypes: {
      autoId: (column) => column.primaryKey(),
      autoIdType: 'bigserial',
      text: sql`text collate "C"`,
    },
    isUniqueViolation: (error) => (error as { code?: string })?.code === '23505',
    isBusy: () => false,
    isStatementTimeout: (error) => (error as { code?: string })?.code === QUERY_CANCELED,
    conversionsSchema: undefined,
    separateConversions: async () => {},
    dropConversionColumns: async (executor, columns) => {
      let alter = executor.schema.alterTable('conversions').dropColumn(columns[0]!);
      for (const column of columns.slice(1)) alter = alter.dropColumn(column);
      await alter.execute();
    },
    refreshStatistics: async (executor = db) => {
      await sql`analyze`.execute(executor);
    },
    idCounters: async (executor = db) => {
      const counters: Record<string, number> = {};
      for (const { table_name, column_name } of await serialColumns(executor)) {
        const sequence = sql.raw(await sequenceOf(executor, table_name, column_name));
        const { rows } = await sql<{ last_value: string; is_called: boolean }>`select last_value, is_called from ${sequence}`.execute(executor);
        counters[table_name] = Number(rows[0]!.last_value) - (rows[0]!.is_called ? 0 : 1);
      }
      return counters;
    },
    resetSequences: async (executor = db, handedOut = {}) => {
      for (const { table_name, column_name } of await serialColumns(executor)) {
        // is_called = false: the next value handed out is exactly the one set (1 on an empty table).
        await sql`select setval(
          pg_get_serial_sequence(quote_ident(current_schema()) || '.' || quote_ident(${table_name}), ${column_name}),
          greatest(coalesce((select max(${sql.ref(column_name)}) from ${sql.table(table_name)}), 0), ${handedOut[table_name] ?? 0}) + 1,
          false)`.execute(executor);
      }
    },
    jsonObject: (table, fields) => {
      const value = (field: JsonField) => {
        const column = sql.ref(`${table}.${field.name}`);
        switch (field.kind) {
          case 'plain':
          case 'number':
            return column;
          case 'boolean':
            return sql`(${column} = 1)`;
          case 'timestamp':
            return sql`to_char(to_timestamp(${column}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;
          case 'json':
            return sql`${column}::json`;
        }
      };
      // row_to_json writes compact JSON (json_build_object puts spaces around every colon); as
      // text, because the driver would otherwise parse it into objects.
      const columns = sql.join(fields.map((field) => sql`${value(field)} as ${sql.id(field.name)}`));
      return sql<string>`(select row_to_json(entry)::text from (select ${columns}) as entry)`;
    },
    ...postgresSql,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: async () => {
      await db.destroy();
    },
  };
}

/**
 * The pool as Kysely takes it, its connections running a statement marked KEEP_PREPARED as a
 * named statement, which PostgreSQL parses and plans once per connection rather than at every
 * run (pg remembers which names a connection has prepared). An import's batch insert is one: a
 * quarter of PostgreSQL's time in an import went to planning it anew (docs/performance.md).
 */
function keepingMarkedStatementsPrepared(pool: pg.Pool): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    connect: async () => {
      const client = await pool.connect();
      let marking = clients.get(client);
      if (!marking) {
        marking = {
          // A statement's text and parameters, or a cursor (Kysely's streams), which goes through as it is.
          query: ((textOrCursor: string | pg.Submittable, parameters?: readonly unknown[]) => {
            if (typeof textOrCursor !== 'string') return client.query(textOrCursor);
            const values = [...(parameters ?? [])];
            return answerOf(
              client,
              textOrCursor.startsWith(KEEP_PREPARED) ? { name: preparedName(textOrCursor), text: textOrCursor, values } : { text: textOrCursor, values },
            );
          }) as unknown as PostgresPoolClient['query'],
          release: () => client.release(),
        };
        clients.set(client, marking);
      }
      return marking;
    },
    end: () => pool.end(),
  };
}

/**
 * A statement's answer, taken from pg's callback rather than from the promise pg returns when
 * given none. Through pg's promise, the rows of an export's statements outlived the scavenges
 * that should have freed them and filled V8's old space, which doubled the service's memory
 * growth during an export; through the callback they did not (docs/performance.md).
 */
function answerOf(client: pg.PoolClient, query: pg.QueryConfig): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    client.query(query, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

// The name of a statement kept prepared: one per text, since a name is prepared with its text,
// and of this process, so that behind a pooler handing server connections from one client to the
// next (PgBouncer in transaction mode) another process's name never meets it.
const PROCESS_TAG = randomBytes(4).toString('hex');
const preparedNames = new Map<string, string>();
function preparedName(text: string): string {
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `acds_${PROCESS_TAG}_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    preparedNames.set(text, name);
  }
  return name;
}

/** Every column fed by a sequence (bigserial) in the schema in use, whatever the migrations made. */
async function serialColumns(executor: Kysely<any>): Promise<{ table_name: string; column_name: string }[]> {
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = current_schema() and column_default like 'nextval(%'`.execute(executor);
  return rows;
}

/** The qualified name of the sequence feeding a column, as PostgreSQL names it (quoted where it must be). */
async function sequenceOf(executor: Kysely<any>, table: string, column: string): Promise<string> {
  const { rows } = await sql<{
    name: string;
  }>`select pg_get_serial_sequence(quote_ident(current_schema()) || '.' || quote_ident(${table}), ${column}) as name`.execute(executor);
  return rows[0]!.name;
}
