import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { FastifyInstance } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { AccountService } from '../../src/accounts/service.js';
import { CONVERSION_INDEX_LAYOUT, openConversionQuestions } from '../../src/conversions/questions.js';
import { conversionCatalogue } from '../../src/conversions/schema.js';
import { seededRandom, syntheticConversions } from '../../src/conversions/synthetic.js';
import { ColumnarIndex, IndexTooSlowError } from '../../src/db/columnar/columnar-index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { parseFilters } from '../../src/filters/parse.js';
import { describeEachEngine, freshDatabase, tempDir, testConfig, type TestDatabase } from '../helpers/database.js';
import { conversionRecord, conversionsAsOf, insertConversions, rowBeforeNarrowing } from '../helpers/fixtures.js';
import { SERVICE_KEY, childProcessesOf, runCli, startCli, spawnService, stopService, succeeded } from '../helpers/processes.js';

type Conversion = Record<string, any>;

/** Questions whose answers the tests work out from the records themselves. */
const QUESTIONS: { query: string; matches: (record: Conversion) => boolean }[] = [
  { query: '', matches: () => true },
  {
    query: 'cart_integration.in=clickbank,buygoods&amount.gte=30',
    matches: (r) => (r.cart_integration === 'clickbank' || r.cart_integration === 'buygoods') && r.amount >= 30,
  },
  { query: 'utm_source=google&mobile=true', matches: (r) => r.utm_source === 'google' && r.mobile === true },
  {
    query: 'tracking_codes=tc-facebook&tracking_codes.in=tc-1,tc-2,tc-3',
    matches: (r) => r.tracking_codes.includes('tc-facebook') && r.tracking_codes.some((c: string) => ['tc-1', 'tc-2', 'tc-3'].includes(c)),
  },
];

const records = (count: number, seed: number): Conversion[] => [...syntheticConversions(count, { random: seededRandom(seed) })];

/** What `ask` answers, asked again while the index does not answer within its time limit (for two minutes at most). */
async function untilAnswered<T>(ask: () => Promise<T>): Promise<T> {
  const givenUpAt = Date.now() + 120_000;
  for (;;) {
    try {
      return await ask();
    } catch (error) {
      if (!(error instanceof IndexTooSlowError) || Date.now() > givenUpAt) throw error;
    }
  }
}

/** Waits until a line of `logged` matches `pattern` (for two minutes at most): the index logs some work after the answers it lets through. */
async function untilLogged(logged: string[], pattern: RegExp): Promise<void> {
  const givenUpAt = Date.now() + 120_000;
  while (!logged.some((line) => pattern.test(line))) {
    if (Date.now() > givenUpAt) assert.fail(`nothing logged matches ${pattern}:\n${logged.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every page of a question: the total it reports, and the receipts in the order listed. */
async function everyPage(
  get: (url: string) => Promise<{ statusCode: number; body: string; json(): any }>,
  query: string,
): Promise<{ total: number; receipts: string[] }> {
  const receipts: string[] = [];
  let total = 0;
  for (let page = 1; ; page++) {
    const response = await get(`/api/v1/conversions?${query}${query ? '&' : ''}page=${page}`);
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    total = body.totalEntries;
    receipts.push(...body.entries.map((entry: Conversion) => entry.receipt));
    if (page >= body.totalPages) return { total, receipts };
  }
}

/** One buyer's questions: `user_id=` alone (read from the row store's index), and beside other filters or by `zip_code` (the columnar index). */
function buyerQuestions(imported: Conversion[]): typeof QUESTIONS {
  const buyer = imported[0]!;
  const coded = imported.find((record) => record.tracking_codes.length > 0)!;
  return [
    { query: `user_id=${buyer.user_id}`, matches: (r) => r.user_id === buyer.user_id },
    {
      query: `user_id=${buyer.user_id}&amount.lte=${buyer.amount}&mobile=${buyer.mobile}`,
      matches: (r) => r.user_id === buyer.user_id && r.amount <= buyer.amount && r.mobile === buyer.mobile,
    },
    {
      query: `zip_code=${coded.zip_code}&tracking_codes=${coded.tracking_codes[0]}`,
      matches: (r) => r.zip_code === coded.zip_code && r.tracking_codes.includes(coded.tracking_codes[0]),
    },
  ];
}

/** Checks every question against the records of the account, in the order they were imported. */
async function assertAnswers(get: Parameters<typeof everyPage>[0], imported: Conversion[]): Promise<void> {
  for (const { query, matches } of [...QUESTIONS, ...buyerQuestions(imported)]) {
    const expected = imported.filter(matches).map((record) => record.receipt);
    assert.ok(expected.length > 0, `${query} matches some records`);
    const { total, receipts } = await everyPage(get, query);
    assert.equal(total, expected.length, `total of ${query || 'everything'}`);
    assert.deepEqual(receipts, expected, `pages of ${query || 'everything'}`);
  }
  const { totals } = (await get('/api/v1/conversions/summary')).json();
  assert.equal(totals.conversions, imported.length);
  assert.equal(totals.buyers, new Set(imported.map((record) => record.email).filter((email) => email !== null)).size, 'the distinct buyers');
}

/** An app on `database` with a key of its own for `account`, closed by the caller. */
async function appOn(database: TestDatabase, account: string) {
  const app: FastifyInstance = await buildApp({ config: testConfig(database, { rateLimit: { max: 0, windowMs: 60_000 } }), database });
  await app.ready();
  const key = await new AccountService(database.db).createKey(account);
  const get = (url: string) => app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
  return { app, get };
}

describeEachEngine('the columnar index', (engine) => {
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase(engine);
  });
  after(() => database.close());

  test('counts and pages stay exact as imports arrive into this account and into others, asked before and after each', async () => {
    const { app, get } = await appOn(database, 'mine');
    const other = await appOn(database, 'theirs');
    try {
      const accounts = new AccountService(database.db);
      const mine = await accounts.findOrCreateAccount('mine');
      const theirs = await accounts.findOrCreateAccount('theirs');
      const first = records(400, 1);
      await insertConversions(database, mine.id, first);
      await assertAnswers(get, first);
      // Another account's rows move the index past the counts cached for this one.
      const theirRecords = records(300, 2);
      await insertConversions(database, theirs.id, theirRecords);
      await assertAnswers(get, first);
      await assertAnswers(other.get, theirRecords);
      // New rows of this account: the cached counts are topped up, the full pages kept.
      const second = records(250, 3);
      await insertConversions(database, mine.id, second);
      await assertAnswers(get, [...first, ...second]);
    } finally {
      await app.close();
      await other.app.close();
    }
  });

  test('an index that is deleted, damaged or made from another database is built again with exact answers', async () => {
    const name = 'rebuilt';
    const { id } = await new AccountService(database.db).findOrCreateAccount(name);
    const imported = records(300, 4);
    await insertConversions(database, id, imported);
    const file = path.join(database.dataDir, 'conversions.duckdb');
    const restarted = async () => {
      const { app, get } = await appOn(database, name);
      try {
        await assertAnswers(get, imported);
      } finally {
        await app.close();
      }
    };
    await restarted();
    if (engine === 'postgres') {
      // Each instance builds an index of its own at start, and removes it when it stops.
      assert.equal(fs.existsSync(file), false);
      return;
    }
    assert.ok(fs.existsSync(file), 'the embedded default keeps its index beside the data');
    fs.rmSync(file);
    await restarted();
    fs.writeFileSync(file, Buffer.alloc(64 * 1024, 'not a database'));
    await restarted();
    // An index of an earlier layout, which kept the e-mail address as text and no hash of it.
    await runOnIndexFile(
      file,
      'CREATE TABLE earlier AS SELECT * EXCLUDE (email_hash), NULL::VARCHAR AS email FROM conversions',
      'DROP TABLE conversions',
      'ALTER TABLE earlier RENAME TO conversions',
      "UPDATE index_meta SET value = 'an earlier layout' WHERE key = 'format'",
    );
    await restarted();
    // The index of another database, with more rows than this one: never used for this one.
    const elsewhere = await freshDatabase('sqlite');
    try {
      const { id: otherId } = await new AccountService(elsewhere.db).findOrCreateAccount(name);
      await insertConversions(elsewhere, otherId, records(700, 5));
      const { app, get } = await appOn(elsewhere, name);
      assert.equal((await get('/api/v1/conversions')).json().totalEntries, 700);
      await app.close();
      fs.copyFileSync(path.join(elsewhere.dataDir, 'conversions.duckdb'), file);
    } finally {
      await elsewhere.close();
    }
    await restarted();
  });
});

/** What `work` makes of the DuckDB file of an index no process holds, as another version or a crash would leave it. */
async function onIndexFile<T>(file: string, work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(file);
  const connection = await instance.connect();
  try {
    return await work(connection);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Whether an index's rows are stored in time order, and the id after which its file records rows waiting to be (if it does). */
function storedOrder(file: string): Promise<{ inOrder: unknown; waiting: unknown }> {
  return onIndexFile(file, async (connection) => {
    const [inOrder] = (
      await connection.runAndReadAll(
        'SELECT bool_and(before IS NULL OR created_at >= before) FROM (SELECT created_at, lag(created_at) OVER (ORDER BY rowid) AS before FROM conversions)',
      )
    ).getRows()[0]!;
    const waiting = (await connection.runAndReadAll("SELECT value FROM index_meta WHERE key = 'unordered_after'")).getRows()[0]?.[0];
    return { inOrder, waiting };
  });
}

/** Runs `statements` on the DuckDB file of an index no process holds (onIndexFile). */
function runOnIndexFile(file: string, ...statements: string[]): Promise<void> {
  return onIndexFile(file, async (connection) => {
    for (const statement of statements) await connection.run(statement);
  });
}

/** The columnar index processes that process `parent` has started (Linux's /proc). */
function indexProcesses(parent: number | 'self' = 'self'): Set<number> {
  return new Set(
    childProcessesOf(parent).filter(
      (pid) => fs.existsSync(`/proc/${pid}/cmdline`) && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('index-process'),
    ),
  );
}

async function gone(pid: number): Promise<void> {
  for (let waited = 0; fs.existsSync(`/proc/${pid}`); waited += 20) {
    assert.ok(waited < 5000, `process ${pid} still there 5 s later`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The index processes this process has started that were not among `before`. */
function startedSince(before: Set<number>): number[] {
  return [...indexProcesses()].filter((pid) => !before.has(pid));
}

/** Kills an index process with SIGKILL and waits until the service has seen it end. */
async function killIndexProcess(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  await gone(pid);
  await new Promise((resolve) => setTimeout(resolve, 50)); // its exit reaches the service
}

/** Runs `work` against an app on a fresh database with one account, then closes both. */
async function onFreshApp(
  engine: 'sqlite' | 'postgres',
  account: string,
  work: (context: { database: TestDatabase; get: Awaited<ReturnType<typeof appOn>>['get']; accountId: number }) => Promise<void>,
): Promise<void> {
  const database = await freshDatabase(engine);
  const { app, get } = await appOn(database, account);
  try {
    const { id } = await new AccountService(database.db).findOrCreateAccount(account);
    await work({ database, get, accountId: id });
  } finally {
    await app.close();
    await database.close();
  }
}

describeEachEngine('the columnar index process', (engine) => {
  test('runs every thread below the priority of the service, and one killed is started again at the next question', async () => {
    const before = indexProcesses();
    await onFreshApp(engine, 'niced', async ({ database, get, accountId: id }) => {
      await insertConversions(database, id, records(50, 6));
      assert.equal((await get('/api/v1/conversions')).json().totalEntries, 50);
      const started = startedSince(before);
      assert.equal(started.length, 1, 'one index process for the app');
      const pid = started[0]!;
      const threads = fs.readdirSync(`/proc/${pid}/task`).map(Number);
      assert.ok(threads.length > 1, 'DuckDB and libuv have threads of their own there');
      const expected = Math.min(19, os.getPriority() + 10);
      for (const thread of threads) assert.equal(os.getPriority(thread), expected, `thread ${thread} of the index process`);

      await killIndexProcess(pid);
      await insertConversions(database, id, records(20, 7));
      assert.equal((await get('/api/v1/conversions')).json().totalEntries, 70);
    });
    assert.deepEqual(indexProcesses(), before, 'closing the app ends its index process');
  });

  test('answers a page asked again under the same data version itself, and asks the process again after a write', async () => {
    const before = indexProcesses();
    await onFreshApp(engine, 'repeated', async ({ database, get, accountId: id }) => {
      await insertConversions(database, id, records(30, 8));
      const question = '/api/v1/conversions?amount.gte=0&page=1';
      const first = (await get(question)).json();
      assert.equal(first.totalEntries, 30);
      const [pid] = startedSince(before);
      assert.ok(pid, 'the question started an index process');
      await killIndexProcess(pid);

      assert.deepEqual((await get(question)).json(), first);
      assert.deepEqual(indexProcesses(), before, 'no index process was started for it');
      await insertConversions(database, id, records(5, 9));
      assert.equal((await get(question)).json().totalEntries, 35);
      assert.equal(startedSince(before).length, 1, 'the question after a write started the process again');
    });
  });

  test('a question asked while conversions keep arriving is answered while they still arrive, counting every one written before it', async () => {
    await onFreshApp(engine, 'streaming', async ({ database, get, accountId: id }) => {
      const stream = records(2_000, 21);
      await insertConversions(database, id, stream.slice(0, 100));
      assert.equal((await get('/api/v1/conversions')).json().totalEntries, 100);

      // One conversion a transaction, as cart notifications arrive, until the records run out;
      // two writers, so that a commit is always on its way while the index catches up.
      let [begun, written] = [100, 100];
      const queue = stream.slice(100);
      const writer = async () => {
        for (let record = queue.shift(); record; record = queue.shift()) {
          begun++;
          await insertConversions(database, id, [record]);
          written++;
        }
      };
      const writing = Promise.all([writer(), writer()]);
      while (written < 120) await new Promise((resolve) => setTimeout(resolve, 5));
      const writtenBefore = written;
      const { totalEntries } = (await get('/api/v1/conversions')).json();
      const begunMeanwhile = begun;
      await writing;

      assert.ok(begunMeanwhile < stream.length, `answered while rows still arrived (after ${begunMeanwhile} of ${stream.length} rows)`);
      assert.ok(totalEntries >= writtenBefore && totalEntries <= begunMeanwhile, `${totalEntries} counted of ${writtenBefore} written before it`);
      assert.equal((await get('/api/v1/conversions')).json().totalEntries, stream.length);
    });
  });

  test('a question it cannot answer within the time limit, waiting for a long catch-up, is a 503 that says how far it is and when to ask again; then answered exactly', async () => {
    const database = await freshDatabase(engine);
    const { id } = await new AccountService(database.db).findOrCreateAccount('patient');
    const imported = records(40_000, 10);
    await insertConversions(database, id, imported);
    // The index is built as the app starts: 40,000 rows take far longer than the limit.
    const app = await buildApp({ config: testConfig(database, { rateLimit: { max: 0, windowMs: 60_000 }, requestStatementTimeoutMs: 50 }), database });
    try {
      await app.ready();
      const key = await new AccountService(database.db).createKey('patient');
      const get = (url: string) => app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

      const exported = await get('/api/v1/conversions/export');
      assert.equal(exported.statusCode, 503, 'an export that cannot start is an error answer, not a broken download');
      assert.equal(exported.headers['content-disposition'], undefined, 'which a browser shows rather than saves as the file');
      assert.equal(typeof exported.json(), 'string');
      const refusals = [exported];
      const readinessMeanwhile: { ready: any; rowsBehind: number }[] = [];
      const givenUpAt = Date.now() + 120_000;
      let answer = await get('/api/v1/conversions');
      while (answer.statusCode === 503 && Date.now() < givenUpAt) {
        refusals.push(answer);
        const ready = await get('/readyz');
        const rowsBehind = Number(/^acds_conversion_index_rows_behind (\d+)$/m.exec((await get('/metrics')).body)?.[1]);
        readinessMeanwhile.push({ ready: { statusCode: ready.statusCode, ...ready.json() }, rowsBehind });
        answer = await get('/api/v1/conversions');
      }
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(answer.json().totalEntries, imported.length);
      // The answer may come before the catch-up's end, its last rows read from the row store.
      while ((await get('/readyz')).json().checks.conversionIndex !== 'ok' && Date.now() < givenUpAt) await sleep(20);
      // Meanwhile the instance stayed ready for everything else, and said its index was catching up.
      const catchingUp = readinessMeanwhile.filter(({ ready }) => ready.checks.conversionIndex === 'catching up');
      assert.ok(catchingUp.length > 0, `readiness said the index was catching up: ${JSON.stringify(readinessMeanwhile.slice(0, 3))}`);
      for (const { ready, rowsBehind } of catchingUp) {
        assert.equal(ready.statusCode, 200);
        assert.equal(ready.status, 'degraded');
        // Read apart from readiness, the metric may already be of the catch-up's end.
        assert.ok(rowsBehind >= 0 && rowsBehind <= imported.length, `rows behind: ${rowsBehind}`);
      }
      assert.ok(
        readinessMeanwhile.some(({ rowsBehind }) => rowsBehind > 0),
        'the metric counted rows behind',
      );
      const ready = await get('/readyz');
      assert.deepEqual([ready.statusCode, ready.json().status, ready.json().checks.conversionIndex], [200, 'ready', 'ok']);
      assert.match((await get('/metrics')).body, /^acds_conversion_index_rows_behind 0$/m);
      // Any refusal says to ask again; once caught up, one may still be a question slower than the 50 ms limit.
      const messages: string[] = refusals.map((refusal) => refusal.json());
      for (const message of messages) assert.match(message, /ask again/);
      const sayingHowFar = refusals.filter((refusal) => /^the index of conversions is catching up after a large write \(\d+% done[,)]/.test(refusal.json()));
      assert.ok(sayingHowFar.length > 0, `some refusal says how far the catch-up is: ${messages.slice(0, 3).join(' | ')}`);
      assert.ok(
        sayingHowFar.some((refusal) => / s to go\)/.test(refusal.json())),
        `some refusal says how long the catch-up has to go: ${messages.slice(0, 3).join(' | ')}`,
      );
      for (const refusal of sayingHowFar) {
        // Once the catch-up has a pace, when it will be done; before, in a minute.
        const toGo = /, about (\d+) s to go\) .*: ask again in (\d+) s$/.exec(refusal.json());
        const askAgainIn = toGo ? Number(toGo[2]) : 60;
        if (toGo) assert.equal(askAgainIn, Math.min(60, Number(toGo[1])), refusal.json());
        else assert.match(refusal.json(), /: ask again in a minute$/);
        assert.equal(refusal.headers['retry-after'], String(askAgainIn), refusal.json());
      }
    } finally {
      await app.close();
      await database.close();
    }
  });

  test('a catch-up of 50,000 rows or more is followed by putting them in time order, and counts of a time window stay exact', async () => {
    const database = await freshDatabase(engine);
    const { id } = await new AccountService(database.db).findOrCreateAccount('reordered');
    // Synthetic conversions come in no order of time, as an import of history may.
    const imported = records(52_000, 14);
    await insertConversions(database, id, imported);
    const logged: string[] = [];
    const questions = openConversionQuestions(testConfig(database), database, (line) => logged.push(line));
    try {
      assert.equal((await untilAnswered(async () => questions.page(await conversionsAsOf(database, id), [], 1))).total, imported.length);
      await untilLogged(logged, /^columnar index: the rows after id 0 put in time order in [\d.]+ s$/);
      const times = imported.map((record) => record.created_at as string).sort();
      const [from, to] = [times[10_000]!, times[20_000]!];
      const window = parseFilters({ 'created_at.gte': from, 'created_at.lt': to }, conversionCatalogue, []);
      const { total, ids } = await questions.page(await conversionsAsOf(database, id), window, 1);
      assert.equal(total, imported.filter((record) => record.created_at >= from && record.created_at < to).length);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
        'a page in id order still',
      );
      // Rows arriving after it are appended after the rows put in order, and counted.
      await insertConversions(database, id, records(10, 15));
      assert.equal((await questions.page(await conversionsAsOf(database, id), [], 1)).total, imported.length + 10);
    } finally {
      await questions.close();
      await database.close();
    }
  });

  test('a few rows arriving while the rows are put in time order are indexed beside the rewrite, not after it', async () => {
    const database = await freshDatabase(engine);
    const accounts = new AccountService(database.db);
    const { id } = await accounts.findOrCreateAccount('reordered');
    const other = await accounts.findOrCreateAccount('arriving');
    const imported = records(52_000, 19);
    await insertConversions(database, id, imported);
    const logged: string[] = [];
    const questions = openConversionQuestions(testConfig(database), database, (line) => logged.push(line));
    const rewritten = /^columnar index: the rows after id 0 put in time order in [\d.]+ s$/;
    try {
      assert.equal((await untilAnswered(async () => questions.page(await conversionsAsOf(database, id), [], 1))).total, imported.length);
      const arriving = records(10, 20);
      await insertConversions(database, other.id, arriving);
      // An export's first batch has the index append the rows above its watermark before it answers.
      const { ids } = await questions.idsAfter(await conversionsAsOf(database, other.id), [], 0, undefined, 100);
      assert.equal(ids.length, arriving.length);
      assert.ok(!logged.some((line) => rewritten.test(line)), `answered after the rewrite:\n${logged.join('\n')}`);
      await untilLogged(logged, rewritten);
      assert.equal((await questions.page(await conversionsAsOf(database, id), [], 1)).total, imported.length);
      assert.equal((await questions.page(await conversionsAsOf(database, other.id), [], 1)).total, arriving.length);
    } finally {
      await questions.close();
      await database.close();
    }
  });

  test('a catch-up of 50,000 rows or more that came in time order keeps them as appended, and counts of a time window stay exact', async () => {
    const database = await freshDatabase(engine);
    const { id } = await new AccountService(database.db).findOrCreateAccount('in-order');
    // An import of a cart's history, oldest first.
    const imported = records(52_000, 17).sort((a, b) => (a.created_at as string).localeCompare(b.created_at as string));
    await insertConversions(database, id, imported);
    const logged: string[] = [];
    const questions = openConversionQuestions(testConfig(database), database, (line) => logged.push(line));
    try {
      assert.equal((await untilAnswered(async () => questions.page(await conversionsAsOf(database, id), [], 1))).total, imported.length);
      assert.ok(logged.includes('columnar index: the rows after id 0 came in time order'), logged.join('\n'));
      assert.ok(!logged.some((line) => line.includes('put in time order')), logged.join('\n'));
      const times = imported.map((record) => record.created_at as string);
      const [from, to] = [times[10_000]!, times[20_000]!];
      const window = parseFilters({ 'created_at.gte': from, 'created_at.lt': to }, conversionCatalogue, []);
      assert.equal(
        (await questions.page(await conversionsAsOf(database, id), window, 1)).total,
        imported.filter((record) => record.created_at >= from && record.created_at < to).length,
      );
    } finally {
      await questions.close();
      await database.close();
    }
  });

  test('an index building itself says so from the moment it opens, and is ok once built, over ids with gaps too', async () => {
    const database = await freshDatabase(engine);
    const { id } = await new AccountService(database.db).findOrCreateAccount('gaps');
    await insertConversions(database, id, records(8_000, 13));
    // Gaps in the ids, as imports rolled back leave on PostgreSQL: the first batch read is not a full one.
    await database.db.deleteFrom('conversions').where(sql<boolean>`id % 2 = 0`).execute();
    const questions = openConversionQuestions(testConfig(database), database, () => {});
    try {
      assert.equal(await questions.opened, true);
      const building = questions.status();
      assert.equal(building.state, 'catching up');
      assert.ok(building.rowsBehind >= 7_000, `rows behind as it opened: ${building.rowsBehind}`);
      const { total } = await untilAnswered(async () => questions.page(await conversionsAsOf(database, id), [], 1));
      assert.equal(total, 4_000);
      const { totals } = await untilAnswered(async () => questions.summary(await conversionsAsOf(database, id), [], [], 'UTC'));
      assert.equal(totals[0], 4_000);
      // An export's first batch waits for the index to hold every row (a page or a summary may be answered from the rows it has yet to append).
      const { ids } = await untilAnswered(async () => questions.idsAfter(await conversionsAsOf(database, id), [], 0, undefined, 10_000));
      assert.equal(ids.length, 4_000);
      assert.deepEqual(questions.status(), { state: 'ok', rowsBehind: 0 });
    } finally {
      await questions.close();
      await database.close();
    }
  });

  test('a question whose index process dies under it is a 503 to ask again, and the next one is answered exactly', async () => {
    const before = indexProcesses();
    await onFreshApp(engine, 'crashed', async ({ database, get, accountId: id }) => {
      // Sixty tracking codes a conversion: a summary by code, hour and source runs for a second or more.
      const imported = records(30_000, 13).map((record): Conversion => ({ ...record, tracking_codes: Array.from({ length: 60 }, (_, code) => `tc-${code}`) }));
      await insertConversions(database, id, imported);
      assert.equal((await get('/api/v1/conversions?amount.gte=0')).json().totalEntries, imported.length);
      const [pid] = startedSince(before);
      assert.ok(pid, 'the question started an index process');

      const heavy = get('/api/v1/conversions/summary?group_by=tracking_codes,hour,utm_source');
      await new Promise((resolve) => setTimeout(resolve, 100));
      await killIndexProcess(pid);
      const refused = await heavy;
      assert.equal(refused.statusCode, 503, refused.body);
      assert.match(refused.json(), /index of conversions is unavailable.*ask again/);
      assert.equal(refused.headers['retry-after'], '5');

      const expected = imported.filter((record) => record.amount >= 30).length;
      assert.equal((await get('/api/v1/conversions?amount.gte=30')).json().totalEntries, expected);
    });
  });

  test('a question past the time limit is interrupted where it runs, and the questions after it are answered', async () => {
    const database = await freshDatabase(engine);
    const { id } = await new AccountService(database.db).findOrCreateAccount('heavy');
    // Sixty tracking codes a conversion: a summary by code, hour and source groups 1,800,000 rows, far past the limit.
    const imported = records(30_000, 12).map((record): Conversion => ({ ...record, tracking_codes: Array.from({ length: 60 }, (_, code) => `tc-${code}`) }));
    await insertConversions(database, id, imported);
    const logged: string[] = [];
    const questions = openConversionQuestions(testConfig(database, { requestStatementTimeoutMs: 200 }), database, (message) => logged.push(message));
    const filtersOf = (query: Record<string, string>) => parseFilters(query, conversionCatalogue, []);
    const stopped = () => logged.some((message) => /stopped a question past the time limit/.test(message));
    try {
      // The first question waits for the index to catch up, and later ones too on a slow machine.
      await untilAnswered(async () => questions.page(await conversionsAsOf(database, id), filtersOf({ 'amount.gte': '0' }), 1));
      const heavy = await questions
        .summary(await conversionsAsOf(database, id), [], ['tracking_codes', 'hour', 'utm_source'], 'UTC')
        .catch((error: unknown) => error);
      assert.ok(heavy instanceof IndexTooSlowError, `the heavy summary outlasts the limit: ${String(heavy)}`);
      // The index process says so when DuckDB ends the statement with an interrupt; left to run, it would not.
      const givenUpAt = Date.now() + 30_000;
      while (!stopped() && Date.now() < givenUpAt) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(stopped(), `the heavy statement was interrupted: ${logged.join(' | ')}`);
      const { total } = await untilAnswered(async () => questions.page(await conversionsAsOf(database, id), filtersOf({ 'amount.gte': '30' }), 1));
      assert.equal(total, imported.filter((record) => record.amount >= 30).length);
    } finally {
      await questions.close();
      await database.close();
    }
  });

  test('a question asked while a long summary runs is answered before the summary ends', async () => {
    const database = await freshDatabase(engine);
    const { id } = await new AccountService(database.db).findOrCreateAccount('beside');
    // Sixty tracking codes a conversion: a summary by code, hour and source runs for a second or more.
    const imported = records(30_000, 14).map((record): Conversion => ({ ...record, tracking_codes: Array.from({ length: 60 }, (_, code) => `tc-${code}`) }));
    await insertConversions(database, id, imported);
    const questions = openConversionQuestions(testConfig(database), database, () => {});
    const filtersOf = (query: Record<string, string>) => parseFilters(query, conversionCatalogue, []);
    try {
      await untilAnswered(async () => questions.page(await conversionsAsOf(database, id), filtersOf({ 'amount.gte': '0' }), 1));
      const settled: string[] = [];
      const heavy = questions
        .summary(await conversionsAsOf(database, id), [], ['tracking_codes', 'hour', 'utm_source'], 'UTC')
        .finally(() => settled.push('summary'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { total } = await questions.page(await conversionsAsOf(database, id), filtersOf({ 'amount.gte': '30' }), 1);
      settled.push('list');
      assert.equal(total, imported.filter((record) => record.amount >= 30).length);
      await heavy;
      assert.deepEqual(settled, ['list', 'summary']);
    } finally {
      await questions.close();
      await database.close();
    }
  });

  test('an index process that does not close in time is killed, so that the service still shuts down', { timeout: 30_000 }, async () => {
    const database = await freshDatabase(engine);
    const before = indexProcesses();
    const logged: string[] = [];
    const questions = openConversionQuestions(testConfig(database, { requestStatementTimeoutMs: 500 }), database, (message) => logged.push(message));
    try {
      assert.equal(await questions.opened, true);
      const [index] = startedSince(before);
      assert.ok(index, 'the index process has started');
      // Stopped, it cannot answer the request to close, as a process stuck in DuckDB could not.
      process.kill(index, 'SIGSTOP');
      const closing = performance.now();
      await questions.close();
      assert.ok(performance.now() - closing >= 450, 'given its time first');
      await gone(index);
      assert.ok(
        logged.some((message) => /did not close within 500 ms; killed/.test(message)),
        logged.join(' | '),
      );
    } finally {
      await database.close();
    }
  });

  test('ends with a service killed, leaving no file of its own behind', async () => {
    const database = await freshDatabase(engine);
    const temporaryDir = tempDir();
    const service = await spawnService(database, { TMPDIR: temporaryDir });
    try {
      const answered = await fetch(`${service.baseUrl}/api/v1/conversions`, { headers: { 'x-api-key': SERVICE_KEY } });
      assert.equal(answered.status, 200);
      const [index] = indexProcesses(service.child.pid);
      assert.ok(index, 'the service has started its index process');
      // PostgreSQL's index is a file of the instance's own; the embedded default's is kept in DATA_DIR.
      const temporaryFiles = () => fs.readdirSync(temporaryDir).filter((name) => name.startsWith('acds-columnar-'));
      assert.equal(temporaryFiles().filter((name) => name.endsWith('.duckdb')).length, engine === 'postgres' ? 1 : 0);
      await stopService(service); // SIGKILL: no chance to close anything
      await gone(index);
      assert.deepEqual(temporaryFiles(), []);
      assert.equal(fs.existsSync(path.join(database.dataDir, 'conversions.duckdb')), engine === 'sqlite');
    } finally {
      await stopService(service);
      await database.close();
    }
  });
});

describeEachEngine('upgrading to the columnar index', (engine) => {
  test('a database from before it keeps every conversion, id and tracking code, and answers as before', async () => {
    const database = await freshDatabase(engine, { upTo: '0006-conversions-file' });
    // The tables of those versions, tracking codes in a table of their own, which migration 0007 drops.
    const db = database.db as Kysely<any>;
    try {
      const { id: accountId } = await new AccountService(database.db).findOrCreateAccount('old');
      const imported = records(250, 6);
      const ids: number[] = [];
      for (const record of imported) {
        const { id } = await db
          .insertInto('conversions')
          .values({ ...rowBeforeNarrowing(record), account_id: accountId })
          .returning('id')
          .executeTakeFirstOrThrow();
        for (const code of new Set<string>(record.tracking_codes))
          await db.insertInto('conversion_tracking_codes').values({ conversion_id: id, account_id: accountId, code }).execute();
        ids.push(id);
      }
      await migrateToLatest(database);
      const { app, get } = await appOn(database, 'old');
      try {
        await assertAnswers(get, imported);
        const { entries } = (await get('/api/v1/conversions?page=1')).json();
        assert.deepEqual(
          entries.map((entry: Conversion) => entry.id),
          ids.slice(0, 100),
          'ids unchanged',
        );
      } finally {
        await app.close();
      }
    } finally {
      await database.close();
    }
  });
});

describeEachEngine('upgrading to conversions kept in their entries (migration 0009)', (engine) => {
  test('every conversion keeps its id and entry, half characters are made whole, ids never come back, and answers are exact', async () => {
    const database = await freshDatabase(engine, { upTo: '0008-cart-notifications' });
    const db = database.db as Kysely<any>;
    try {
      const { id: accountId } = await new AccountService(database.db).findOrCreateAccount('old');
      const imported = records(120, 7);
      // An entry written before the import made text whole: JSON.stringify escapes half a character.
      imported[5]!.first_name = 'Ana\ud800';
      const rows = imported.map(rowBeforeNarrowing);
      rows[5]!.entry_json = (rows[5]!.entry_json as string).replace('"first_name":"Ana\uFFFD"', '"first_name":"Ana\\ud800"');
      assert.match(rows[5]!.entry_json as string, /"Ana\\ud800"/);
      const ids: number[] = [];
      for (const row of [...rows, rowBeforeNarrowing(records(1, 8)[0]!)]) {
        const { id } = await db
          .insertInto('conversions')
          .values({ ...row, account_id: accountId })
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(id);
      }
      const entriesBefore = await db.selectFrom('conversions').select(['id', 'entry_json']).orderBy('id').execute();
      // The newest row gone: its id must still never come back.
      await db.deleteFrom('conversions').where('id', '=', ids.at(-1)!).execute();

      await migrateToLatest(database);
      const entriesAfter = await db.selectFrom('conversions').selectAll().orderBy('id').execute();
      assert.deepEqual(Object.keys(entriesAfter[0]!).sort(), ['account_id', 'cart_integration', 'created_at', 'entry_json', 'id', 'receipt', 'user_id']);
      assert.deepEqual(
        entriesAfter.map((row) => [row.id, row.entry_json]),
        entriesBefore.slice(0, -1).map((row, index) => [row.id, index === 5 ? row.entry_json.replace('Ana\\ud800', 'Ana\uFFFD') : row.entry_json]),
      );
      imported[5]!.first_name = 'Ana\uFFFD';
      const { app, get } = await appOn(database, 'old');
      try {
        await assertAnswers(get, imported);
        assert.equal((await get('/api/v1/conversions?first_name=Ana%EF%BF%BD')).json().totalEntries, 1);
      } finally {
        await app.close();
      }
      await insertConversions(database, accountId, records(1, 9));
      const newest = await db
        .selectFrom('conversions')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirstOrThrow();
      assert.ok(Number(newest.id) > ids.at(-1)!, `the new conversion's id ${newest.id} is past every id handed out before (${ids.at(-1)})`);
    } finally {
      await database.close();
    }
  });
});

describeEachEngine('a kill -9', (engine) => {
  const ROWS = 20_000;
  let database: TestDatabase;
  let dir: string;
  before(async () => {
    database = await freshDatabase(engine);
    dir = tempDir();
  });
  after(async () => {
    await database.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({ ...process.env, DATA_DIR: database.dataDir, DATABASE_URL: database.databaseUrl ?? '', LOG_LEVEL: 'warn' });
  const fileOf = (name: string, rows: Conversion[]) => {
    const file = path.join(dir, `${name}.ndjson`);
    fs.writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n'));
    return file;
  };
  const rowsInDatabase = async () =>
    Number(
      (
        await database.db
          .selectFrom('conversions')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('at any moment of an import or of catching up loses nothing acknowledged and leaves no partial import', async () => {
    let service = await spawnService(database);
    const stored: Conversion[] = [];
    const count = async (query = '') => {
      const response = await fetch(`${service.baseUrl}/api/v1/conversions?${query}`, { headers: { 'x-api-key': SERVICE_KEY } });
      assert.equal(response.status, 200);
      return ((await response.json()) as { totalEntries: number }).totalEntries;
    };
    try {
      // Imports killed at several moments: each leaves all of its rows or none.
      for (const [attempt, delayMs] of [150, 600, 1200, 2000].entries()) {
        const rows = records(ROWS, 10 + attempt);
        const cli = startCli(['conversions', 'import', fileOf(`killed-${attempt}`, rows)], env());
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        cli.child.kill('SIGKILL');
        const run = await cli.done;
        const inDatabase = await rowsInDatabase();
        // An import that committed and was killed before it could exit has all of its rows too.
        const all = inDatabase === stored.length + rows.length;
        assert.ok(all || inDatabase === stored.length, `after a kill ${delayMs} ms into an import: all of its rows or none, not ${inDatabase}`);
        if (run.code === 0) assert.ok(all, `an import that said it was done has all of its rows`);
        if (all) stored.push(...rows);
      }
      // An import acknowledged, then the service killed while it catches up.
      const rows = records(ROWS, 20);
      succeeded(await runCli(['conversions', 'import', fileOf('whole', rows)], env()));
      stored.push(...rows);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // its next look at the database
      await stopService(service);
      service = await spawnService(database);
      assert.equal(await count(), stored.length);
      const bigOnes = stored.filter((record) => record.amount >= 50 && record.country === 'US').length;
      assert.equal(await count('amount.gte=50&country=US'), bigOnes);
    } finally {
      await stopService(service);
    }
  });
});

// The embedded default's index file, held by another process (with PostgreSQL each instance has a file of its own).
test('a service whose index cannot open still serves assets, answers conversion questions 503 at once, and opens the index once it is free', async () => {
  const database = await freshDatabase('sqlite');
  // Another process's index holds the file: the index process waits for it, then gives up.
  const holder = await DuckDBInstance.create(path.join(database.dataDir, 'conversions.duckdb'));
  try {
    const app = await buildApp({ config: testConfig(database, { rateLimit: { max: 0, windowMs: 60_000 } }), database });
    try {
      const accounts = new AccountService(database.db);
      const key = await accounts.createKey('default');
      await insertConversions(database, (await accounts.findOrCreateAccount('default')).id, records(12, 15));
      const get = (url: string) => app.inject({ url, headers: { 'x-api-key': key } });
      const indexState = async () => (await app.inject({ url: '/readyz' })).json().checks.conversionIndex;
      assert.equal((await get('/api/v1/assets')).statusCode, 200);
      const ready = await app.inject({ url: '/readyz' });
      assert.deepEqual([ready.statusCode, ready.json().status, ready.json().checks.conversionIndex], [200, 'degraded', 'unavailable']);

      for (const url of ['/api/v1/conversions', '/api/v1/conversions/summary']) {
        const asked = performance.now();
        const refused = await get(url);
        // Not after starting the index again and waiting for the file, as each question did before.
        assert.ok(performance.now() - asked < 2_000, `${url} answered at once`);
        assert.equal(refused.statusCode, 503, refused.body);
        assert.match(refused.json(), /index of conversions is unavailable.*ask again/);
        assert.equal(refused.headers['retry-after'], '5');
      }

      holder.closeSync();
      const givenUpAt = Date.now() + 30_000;
      while ((await indexState()) !== 'ok') {
        assert.ok(Date.now() < givenUpAt, 'the index opens by itself once the file is free');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal((await get('/api/v1/conversions')).json().totalEntries, 12);
    } finally {
      await app.close();
    }
  } finally {
    holder.closeSync();
    await database.close();
  }
});

// The embedded default keeps its index across restarts (with PostgreSQL each instance builds one of its own at start).
test('rows a rewrite in time order left waiting (the process killed under it) are put in order at the next opening, and answer exactly', async () => {
  const database = await freshDatabase('sqlite');
  const file = path.join(database.dataDir, 'conversions.duckdb');
  const { id } = await new AccountService(database.db).findOrCreateAccount('waiting');
  const imported = records(52_000, 16);
  await insertConversions(database, id, imported);
  const storedState = () => storedOrder(file);
  const opened = async () => {
    const logged: string[] = [];
    const questions = openConversionQuestions(testConfig(database), database, (line) => logged.push(line));
    try {
      assert.equal((await untilAnswered(async () => questions.page(await conversionsAsOf(database, id), [], 1))).total, imported.length);
      const times = imported.map((record) => record.created_at as string).sort();
      const [from, to] = [times[30_000]!, times[40_000]!];
      const window = parseFilters({ 'created_at.gte': from, 'created_at.lt': to }, conversionCatalogue, []);
      assert.equal(
        (await questions.page(await conversionsAsOf(database, id), window, 1)).total,
        imported.filter((record) => record.created_at >= from && record.created_at < to).length,
      );
      // The rewrite follows the answers, and closing would stop it.
      await untilLogged(logged, /^columnar index: the rows after id 0 put in time order in [\d.]+ s$/);
    } finally {
      await questions.close();
    }
    return logged;
  };
  try {
    await opened();
    assert.deepEqual(await storedState(), { inOrder: true, waiting: undefined });

    // As a process killed while it rewrote leaves the file: the rows in the order appended, their wait recorded.
    await runOnIndexFile(
      file,
      'CREATE TABLE appended AS SELECT * FROM conversions ORDER BY id',
      'DROP TABLE conversions',
      'ALTER TABLE appended RENAME TO conversions',
      "INSERT OR REPLACE INTO index_meta VALUES ('unordered_after', '0')",
    );
    assert.deepEqual(await storedState(), { inOrder: false, waiting: '0' });

    await opened();
    assert.deepEqual(await storedState(), { inOrder: true, waiting: undefined });
  } finally {
    await database.close();
  }
});

test('closing while the rows are put in time order stops the rewrite or lets it end, and either way the next opening leaves them in order', async () => {
  const database = await freshDatabase('sqlite');
  const file = path.join(database.dataDir, 'conversions.duckdb');
  const { id } = await new AccountService(database.db).findOrCreateAccount('closed-mid-rewrite');
  const imported = records(52_000, 18);
  await insertConversions(database, id, imported);
  const reopened = async (closing: 'at once' | 'once in order') => {
    const logged: string[] = [];
    const questions = openConversionQuestions(testConfig(database), database, (line) => logged.push(line));
    try {
      assert.equal((await untilAnswered(async () => questions.page(await conversionsAsOf(database, id), [], 1))).total, imported.length);
      if (closing === 'once in order') await untilLogged(logged, /^columnar index: the rows after id 0 put in time order in [\d.]+ s$/);
    } finally {
      // At once: as soon as the rows are answered, most often while the rewrite, which follows, still runs.
      await questions.close();
    }
    return logged;
  };
  try {
    const logged = await reopened('at once');
    const stopped = logged.some((line) => line.startsWith('columnar index: not put in time order ('));
    const ended = logged.some((line) => /^columnar index: the rows after id 0 put in time order in [\d.]+ s$/.test(line));
    assert.ok(stopped !== ended, logged.join('\n'));
    // Stopped, the rows stay as appended (in no order of time) and recorded as waiting.
    assert.deepEqual(await storedOrder(file), stopped ? { inOrder: false, waiting: '0' } : { inOrder: true, waiting: undefined });

    await reopened('once in order');
    assert.deepEqual(await storedOrder(file), { inOrder: true, waiting: undefined });
  } finally {
    await database.close();
  }
});

/**
 * An index that looks for new rows only when asked (its poll an hour apart): a page or a summary
 * reads the rows above its watermark; an export's first batch appends them (catchUp).
 */
function indexAppendingWhenAsked(database: TestDatabase): ColumnarIndex & { catchUp: (accountId: number, newestId: number) => Promise<unknown> } {
  const index = new ColumnarIndex(
    {
      ...CONVERSION_INDEX_LAYOUT,
      file: undefined,
      source: database.conversionSource,
      memoryLimit: '64MB',
      threads: 1,
      pollMs: 3_600_000,
      niceness: 0,
      questionTimeoutMs: 60_000,
    },
    () => {},
  );
  return Object.assign(index, { catchUp: (accountId: number, newestId: number) => index.idsAfter(accountId, newestId, [], 0, undefined, 1) });
}

/**
 * Two accounts, `mine` and `theirs`, and a way to import into either that keeps what `mine` holds
 * and the id none of its rows lies above, as a request finds it.
 */
async function twoAccounts(database: TestDatabase) {
  const accounts = new AccountService(database.db);
  const mine = await accounts.findOrCreateAccount('mine');
  const theirs = await accounts.findOrCreateAccount('theirs');
  const imported: Conversion[] = [];
  let newest = 0;
  const importInto = async (accountId: number, batch: Conversion[]) => {
    await insertConversions(database, accountId, batch);
    if (accountId !== mine.id) return;
    imported.push(...batch);
    newest = (await conversionsAsOf(database, mine.id)).newestId;
  };
  return { mine, theirs, imported, importInto, newestId: () => newest };
}

describeEachEngine('rows the index has not appended yet', (engine) => {
  test('are counted and listed by questions of a page, on pages across the last indexed row, in their own account only', async () => {
    const database = await freshDatabase(engine);
    const index = indexAppendingWhenAsked(database);
    try {
      const { mine, theirs, imported, importInto, newestId } = await twoAccounts(database);
      const assertPages = async () => {
        const ids = new Map(
          (await database.db.selectFrom('conversions').select(['id', 'receipt']).where('account_id', '=', mine.id).execute()).map((row) => [
            row.receipt,
            Number(row.id),
          ]),
        );
        for (const { query, matches } of QUESTIONS) {
          const filters = parseFilters(Object.fromEntries(new URLSearchParams(query)), conversionCatalogue, []);
          const expected = imported.filter(matches).map((record) => ids.get(record.receipt)!);
          const listed: number[] = [];
          for (let page = 1; page <= Math.ceil(expected.length / 100) + 1; page++) {
            const answer = await index.page(mine.id, newestId(), filters, page);
            assert.equal(answer.total, expected.length, `total of ${query || 'everything'}, page ${page}`);
            listed.push(...answer.ids);
          }
          assert.deepEqual(listed, expected, `pages of ${query || 'everything'}`);
        }
      };

      await importInto(mine.id, records(230, 41));
      await index.catchUp(mine.id, newestId());
      await assertPages();
      // Above the watermark now: rows of this account, interleaved with another's.
      for (const seed of [42, 43, 44]) {
        await importInto(mine.id, records(70, seed));
        await importInto(theirs.id, records(40, seed + 10));
        await assertPages();
      }
      // More than are read above the watermark: the question waits for the index to append them.
      await importInto(mine.id, records(5_100, 45));
      await assertPages();
      await importInto(mine.id, records(90, 46));
      await assertPages();
    } finally {
      await index.close();
      await database.close();
    }
  });

  test('are summed by summaries as the index sums them once it holds them, in their own account only', async () => {
    const database = await freshDatabase(engine);
    const index = indexAppendingWhenAsked(database);
    try {
      const { mine, theirs, imported, importInto, newestId } = await twoAccounts(database);
      const summaries: { query: string; groupBy: string[]; timeZone: string }[] = [
        { query: '', groupBy: [], timeZone: 'UTC' },
        { query: '', groupBy: ['month', 'cart_integration'], timeZone: 'America/New_York' },
        { query: 'utm_source=facebook', groupBy: ['day'], timeZone: 'Europe/Berlin' },
        { query: 'amount.gte=40', groupBy: ['tracking_codes', 'mobile'], timeZone: 'UTC' },
        { query: 'tracking_codes.in=tc-google,tc-1', groupBy: ['week', 'utm_source'], timeZone: 'Asia/Kolkata' },
        { query: 'cart_integration.in=clickbank,digistore', groupBy: ['hour'], timeZone: 'UTC' },
      ];
      const summarise = () =>
        Promise.all(
          summaries.map(({ query, groupBy, timeZone }) =>
            index.summary(mine.id, newestId(), parseFilters(Object.fromEntries(new URLSearchParams(query)), conversionCatalogue, []), groupBy, timeZone),
          ),
        );

      await importInto(mine.id, records(300, 51));
      await index.catchUp(mine.id, newestId());
      // Rows above the watermark, of this account and another, one of them dated outside every window before.
      await importInto(mine.id, [...records(80, 52), conversionRecord({ receipt: 'LATE-1', created_at: '2031-07-04T23:30:00Z', amount: 12.34 })]);
      await importInto(theirs.id, records(60, 53));
      const beyondTheWatermark = await summarise();
      assert.equal(beyondTheWatermark[0]!.totals[0], imported.length, 'every row of the account is summed, the index holding only some');
      await index.catchUp(mine.id, newestId());
      const caughtUp = await summarise();
      for (const [at, { query, groupBy }] of summaries.entries()) {
        assert.deepEqual(beyondTheWatermark[at], caughtUp[at], `${query || 'everything'} by ${groupBy.join(',') || 'nothing'}`);
      }
      assert.ok(
        caughtUp.every((summary) => summary.groups.length > 1 || summary.totals[0] === imported.length),
        'the summaries have groups',
      );
    } finally {
      await index.close();
      await database.close();
    }
  });

  test("another account's import, more rows than are read above the watermark, holds no question of this account up: each is answered at the watermark, exactly", async () => {
    const database = await freshDatabase(engine);
    const index = indexAppendingWhenAsked(database);
    try {
      const { mine, theirs, imported, importInto, newestId } = await twoAccounts(database);
      const everyId = () => index.idsAfter(mine.id, newestId(), [], 0, undefined, 10_000);
      await importInto(mine.id, records(200, 71));
      await index.catchUp(mine.id, newestId());
      const { upTo: watermark } = await everyId();

      await importInto(theirs.id, records(6_000, 72));
      assert.equal((await index.page(mine.id, newestId(), [], 1)).total, imported.length);
      assert.equal((await index.summary(mine.id, newestId(), [], ['month'], 'UTC')).totals[0], imported.length);
      const batch = await everyId();
      assert.equal(batch.upTo, watermark, "answered without appending the other account's rows");
      assert.equal(batch.ids.length, imported.length);

      // Rows of this account above the other's are read with the index's.
      await importInto(mine.id, records(50, 73));
      assert.equal((await index.page(mine.id, newestId(), [], 1)).total, imported.length);
      const after = await everyId();
      assert.ok(after.upTo >= newestId(), `answered at ${after.upTo}, this account's rows reaching ${newestId()}`);
      assert.equal(after.ids.length, imported.length);
    } finally {
      await index.close();
      await database.close();
    }
  });

  test("an account's few rows above another account's import are read on their own: its pages, summaries and exports hold them, the index appending nothing for them", async () => {
    const database = await freshDatabase(engine);
    const index = indexAppendingWhenAsked(database);
    try {
      const { mine, theirs, imported, importInto, newestId } = await twoAccounts(database);
      await importInto(mine.id, records(200, 81));
      await index.catchUp(mine.id, newestId());
      await importInto(theirs.id, records(6_000, 82));
      await importInto(mine.id, records(50, 83));
      const rows = await database.db.selectFrom('conversions').select(['id', 'receipt']).where('account_id', '=', mine.id).execute();
      const idOf = new Map(rows.map((row) => [row.receipt, Number(row.id)]));
      for (const { query, matches } of QUESTIONS) {
        const filters = parseFilters(Object.fromEntries(new URLSearchParams(query)), conversionCatalogue, []);
        const expected = imported.filter(matches).map((record) => idOf.get(record.receipt)!);
        const listed: number[] = [];
        for (let page = 1; page <= 3; page++) {
          const answer = await index.page(mine.id, newestId(), filters, page);
          assert.equal(answer.total, expected.length, `total of ${query || 'everything'}, page ${page}`);
          listed.push(...answer.ids);
        }
        assert.deepEqual(listed, expected, `pages of ${query || 'everything'}`);
        assert.equal((await index.summary(mine.id, newestId(), filters, ['day'], 'UTC')).totals[0], expected.length, `summary of ${query || 'everything'}`);
        // An export, in batches of 40 ids, each after the last id of the one before.
        const exported: number[] = [];
        for (let batch = await index.idsAfter(mine.id, newestId(), filters, 0, undefined, 40); ; ) {
          exported.push(...batch.ids);
          if (batch.ids.length < 40) break;
          batch = await index.idsAfter(mine.id, newestId(), filters, batch.ids.at(-1)!, batch.upTo, 40);
        }
        assert.deepEqual(exported, expected, `export of ${query || 'everything'}`);
      }
      // What the index holds of the account: an export's first batch asking for no row above it.
      const held = () => index.idsAfter(mine.id, 0, [], 0, undefined, 10_000);
      assert.equal((await held()).ids.length, 200, 'the index holds the rows it held before');

      // Many of its own above the watermark: they are waited for.
      await importInto(mine.id, records(5_100, 84));
      assert.equal((await index.page(mine.id, newestId(), [], 1)).total, imported.length);
      assert.equal((await held()).ids.length, imported.length);
    } finally {
      await index.close();
      await database.close();
    }
  });

  test("a summary's totals, shared by every grouping of its filters, count the buyers of rows indexed after them", async () => {
    const database = await freshDatabase(engine);
    const index = indexAppendingWhenAsked(database);
    try {
      const { mine, imported, importInto, newestId } = await twoAccounts(database);
      const filters = parseFilters({ utm_source: 'facebook' }, conversionCatalogue, []);
      const buyersBy = async (groupBy: string[], timeZone: string) => (await index.summary(mine.id, newestId(), filters, groupBy, timeZone)).totals.at(-1);
      const expectedBuyers = () => new Set(imported.filter((record) => record.utm_source === 'facebook').map((record) => record.email)).size;

      await importInto(mine.id, records(200, 61));
      await index.catchUp(mine.id, newestId());
      assert.equal(await buyersBy(['day'], 'UTC'), expectedBuyers());
      assert.equal(await buyersBy(['week', 'cart_integration'], 'America/New_York'), expectedBuyers(), 'another grouping, the same totals');
      // New buyers, indexed before the next summary: its watermark is another.
      await importInto(
        mine.id,
        ['first@example.com', 'second@example.com'].map((email, at) => conversionRecord({ receipt: `NEW-BUYER-${at}`, utm_source: 'facebook', email })),
      );
      await index.catchUp(mine.id, newestId());
      assert.equal(await buyersBy(['month'], 'Europe/Berlin'), expectedBuyers());
      assert.equal(await buyersBy(['day'], 'UTC'), expectedBuyers(), 'a grouping asked before');
    } finally {
      await index.close();
      await database.close();
    }
  });
});
