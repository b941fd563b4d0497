import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, sqliteFile } from '../../src/db/database.js';
import { describeEachEngine, freshDatabase, tempDir } from '../helpers/database.js';
import { conversionRecord, insertConversions } from '../helpers/fixtures.js';
import { lastLine, runCli, SERVICE_KEY, spawnService, stopService, succeeded, type CliRun } from '../helpers/processes.js';
import { holdWrites } from '../helpers/write-locks.js';
import { startS3Server, type TestS3Server } from '../helpers/s3.js';
import { S3BlobStore } from '../../src/storage/s3-blob-store.js';
import type { BlobStore } from '../../src/storage/blob-store.js';

/** The operator's command line (docs/command-line.md), each command in a child process as an operator runs it. */

const KEY_SHAPE = /^acds_[A-Za-z0-9_-]{32}$/;

interface Store {
  dataDir: string;
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

/**
 * Where a CLI run keeps its data: on SQLite a brand-new empty folder (not even migrated); on
 * PostgreSQL a new empty database on the TEST_DATABASE_URL server.
 */
async function blankStore(engine: 'sqlite' | 'postgres'): Promise<Store> {
  if (engine === 'postgres') {
    const database = await freshDatabase('postgres');
    return { dataDir: database.dataDir, databaseUrl: database.databaseUrl, close: () => database.close() };
  }
  const dataDir = tempDir('acds-cli-');
  return { dataDir, databaseUrl: undefined, close: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
}

/** The environment of a command: only what the test sets, none of the acds variables of the test's own environment. */
function cliEnv(store: Store, env: Record<string, string>): NodeJS.ProcessEnv {
  const clean = { ...process.env };
  for (const name of Object.keys(clean)) {
    if (/^(PORT|HOST|DATA_DIR|DATABASE_URL|REDIS_URL|RATE_LIMIT_PER_MINUTE|TRUST_PROXY|MAX_UPLOAD_BYTES|BOOTSTRAP_API_KEY|LOG_LEVEL|S3_.*)$/.test(name)) {
      delete clean[name];
    }
  }
  return { ...clean, DATA_DIR: store.dataDir, DATABASE_URL: store.databaseUrl ?? '', LOG_LEVEL: 'warn', ...env };
}

function cli(store: Store, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, cliEnv(store, env));
}

/** Runs `work` against an app on the store's data (and bytes, when given), as the service would serve it. */
async function withApp<T>(store: Store, work: (app: FastifyInstance) => Promise<T>, blobs?: BlobStore): Promise<T> {
  const database = openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, poolSize: 2 });
  const config = {
    ...loadConfig({}),
    dataDir: store.dataDir,
    databaseUrl: store.databaseUrl,
    logLevel: 'silent' as const,
    rateLimit: { max: 0, windowMs: 60_000 },
  };
  const app = await buildApp({ config, database, blobs });
  try {
    await app.ready();
    return await work(app);
  } finally {
    await app.close();
    await database.close();
  }
}

/** Resolves once a session of the database waits for a lock (within 20 s). */
async function waitForLockWaiter(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (let tries = 0; tries < 200; tries++) {
      const { rows } = await client.query(
        `select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if (rows[0].waiting > 0) return;
      await sleep(100);
    }
    assert.fail('no session came to wait for the lock');
  } finally {
    await client.end();
  }
}

async function statusWithKey(store: Store, key: string): Promise<number> {
  return withApp(store, async (app) => (await app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': key } })).statusCode);
}

describeEachEngine('keys create, list and revoke', (engine) => {
  let store: Store;
  let acmeKey: string;
  before(async () => {
    store = await blankStore(engine);
  });
  after(() => store?.close());

  test('keys create --account NAME prints a new key as its last line, and that key authenticates', async () => {
    const run = succeeded(await cli(store, ['keys', 'create', '--account', 'acme']));
    acmeKey = lastLine(run.stdout);
    assert.match(acmeKey, KEY_SHAPE);
    assert.equal(run.stdout.split(acmeKey).length - 1, 1, 'the key is printed once');
    assert.equal(await statusWithKey(store, acmeKey), 200);
  });

  test('keys create without --account makes a key for the account default; every key is new', async () => {
    const first = lastLine(succeeded(await cli(store, ['keys', 'create'])).stdout);
    const second = lastLine(succeeded(await cli(store, ['keys', 'create', '--account', 'acme'])).stdout);
    assert.match(first, KEY_SHAPE);
    assert.match(second, KEY_SHAPE);
    assert.equal(new Set([first, second, acmeKey]).size, 3);
    assert.equal(await statusWithKey(store, first), 200);
    const defaultList = succeeded(await cli(store, ['keys', 'list'])).stdout;
    assert.ok(defaultList.includes(first.slice(0, 13)), defaultList);
    assert.ok(!defaultList.includes(acmeKey.slice(0, 13)), "another account's key is not listed");
  });

  test('keys list shows each key by its prefix and state, and never a whole key', async () => {
    const run = succeeded(await cli(store, ['keys', 'list', '--account', 'acme']));
    const lines = run.stdout.trim().split('\n');
    assert.equal(lines.length, 2, run.stdout);
    assert.ok(run.stdout.includes(acmeKey.slice(0, 13)), run.stdout);
    assert.ok(
      lines.every((line) => /\bactive\b/.test(line)),
      run.stdout,
    );
    // Nothing beyond the short prefix of any key: no 20-character run of a key appears.
    assert.ok(!run.stdout.includes(acmeKey.slice(0, 20)), run.stdout);
    assert.ok(!run.stdout.includes(acmeKey.slice(-20)), run.stdout);
    for (const line of lines) assert.ok(!/acds_[A-Za-z0-9_-]{9,}/.test(line), `only a short prefix: ${line}`);
  });

  test("keys revoke PREFIX makes that key fail with 401 and leaves the account's other keys working", async () => {
    const other = lastLine(succeeded(await cli(store, ['keys', 'create', '--account', 'acme'])).stdout);
    const prefix = acmeKey.slice(0, 13);
    succeeded(await cli(store, ['keys', 'revoke', prefix]));
    assert.equal(await statusWithKey(store, acmeKey), 401);
    assert.equal(await statusWithKey(store, other), 200);
    const listed = succeeded(await cli(store, ['keys', 'list', '--account', 'acme'])).stdout;
    const line = listed.split('\n').find((l) => l.startsWith(prefix));
    assert.ok(line && /revoked/.test(line), listed);
  });

  test('keys commands that cannot do their work exit non-zero with a message on standard error', async () => {
    const unknownPrefix = await cli(store, ['keys', 'revoke', 'acds_ZZZZZZZZ']);
    assert.notEqual(unknownPrefix.code, 0);
    assert.match(unknownPrefix.stderr, /acds_ZZZZZZZZ/);
    const noAccount = await cli(store, ['keys', 'list', '--account', 'nobody']);
    assert.notEqual(noAccount.code, 0);
    assert.match(noAccount.stderr, /nobody/);
    const badName = await cli(store, ['keys', 'create', '--account', 'no spaces/here']);
    assert.notEqual(badName.code, 0);
    assert.ok(badName.stderr.trim().length > 0);
    assert.ok(!KEY_SHAPE.test(lastLine(badName.stdout || '-')), 'no key is printed');
  });

  test('a key made while another writer of accounts and keys is in its transaction: SQLite says the database is busy, PostgreSQL makes it', async () => {
    succeeded(await cli(store, ['keys', 'create', '--account', 'busy']));
    const database = openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, poolSize: 1 });
    const account = await database.db.selectFrom('accounts').select('id').where('name', '=', 'busy').executeTakeFirstOrThrow();
    await database.close();
    const endTransaction = await holdWrites(store, account.id);
    let ended = false;
    const end = async () => {
      if (!ended) await endTransaction();
      ended = true;
    };
    try {
      const running = cli(store, ['keys', 'create', '--account', 'busy']);
      if (engine === 'sqlite') {
        const run = await running;
        assert.notEqual(run.code, 0);
        assert.match(run.stderr, /the database is busy with another writer, such as an import; run this again once it has finished/);
      } else {
        // PostgreSQL makes the new key wait for the account's row (its foreign key), then goes on.
        await waitForLockWaiter(store.databaseUrl!);
        await end();
        assert.match(lastLine(succeeded(await running).stdout), KEY_SHAPE);
      }
    } finally {
      await end();
    }
  });
});

describeEachEngine('seed', (engine) => {
  let store: Store;
  let run: CliRun;
  // On PostgreSQL the bytes go to S3, as a scaled-out deployment keeps them.
  let s3: TestS3Server | undefined;
  let blobs: BlobStore | undefined;
  before(async () => {
    store = await blankStore(engine);
    s3 = engine === 'postgres' ? await startS3Server() : undefined;
    blobs = s3 && new S3BlobStore(s3.options);
    const s3Env: Record<string, string> = s3
      ? {
          S3_BUCKET: s3.options.bucket,
          S3_ENDPOINT: s3.options.endpoint!,
          S3_REGION: s3.options.region!,
          S3_ACCESS_KEY_ID: s3.options.accessKeyId!,
          S3_SECRET_ACCESS_KEY: s3.options.secretAccessKey!,
          S3_FORCE_PATH_STYLE: 'true',
        }
      : {};
    run = await cli(store, ['seed', '--conversions', '200', '--assets', '5', '--account', 'shop'], s3Env);
  });
  after(async () => {
    await blobs?.close();
    await s3?.close();
    await store?.close();
  });

  test('seed --conversions 200 --assets 5 succeeds and says what it added', () => {
    succeeded(run);
    assert.match(run.stdout, /200 conversions/);
    assert.match(run.stdout, /5 assets/);
  });

  test('the seeded account serves 200 realistic conversions: several carts, currencies and countries, and upsell chains sharing original_receipt', async () => {
    const key = lastLine(succeeded(await cli(store, ['keys', 'create', '--account', 'shop'])).stdout);
    const entries = await withApp(store, async (app) => {
      const all: Record<string, unknown>[] = [];
      for (const page of [1, 2]) {
        const response = await app.inject({ url: `/api/v1/conversions?page=${page}`, headers: { 'x-api-key': key } });
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json();
        assert.equal(body.totalEntries, 200);
        assert.equal(body.totalPages, 2);
        all.push(...body.entries);
      }
      return all;
    });
    assert.equal(entries.length, 200);
    assert.equal(new Set(entries.map((e) => `${e.cart_integration}/${e.receipt}`)).size, 200, 'every conversion is distinct');
    const distinct = (field: string) => new Set(entries.map((e) => e[field])).size;
    assert.ok(distinct('cart_integration') >= 3, `carts: ${distinct('cart_integration')}`);
    assert.ok(distinct('currency') >= 3, `currencies: ${distinct('currency')}`);
    assert.ok(distinct('country') >= 3, `countries: ${distinct('country')}`);
    assert.ok(distinct('utm_source') >= 2);
    for (const entry of entries) {
      assert.match(String(entry.currency), /^[A-Z]{3}$/);
      assert.match(String(entry.country), /^[A-Z]{2}$/);
      assert.equal(typeof entry.amount, 'number');
      assert.ok(Array.isArray(entry.products) && entry.products.length > 0);
      assert.match(String(entry.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    const chains = new Map<string, Record<string, unknown>[]>();
    for (const entry of entries) {
      const key = String(entry.original_receipt);
      chains.set(key, [...(chains.get(key) ?? []), entry]);
    }
    const upsellChains = [...chains.values()].filter((chain) => chain.length >= 2);
    assert.ok(upsellChains.length >= 3, `upsell chains of two or more orders: ${upsellChains.length}`);
    for (const chain of upsellChains) {
      const head = chain.find((e) => e.receipt === e.original_receipt);
      assert.ok(head, 'a chain starts with the order whose receipt is the original receipt');
      assert.equal(new Set(chain.map((e) => e.cart_integration)).size, 1, 'a chain stays in one cart');
      assert.equal(new Set(chain.map((e) => e.email)).size, 1, 'a chain is one buyer');
      assert.ok(chain.some((e) => e !== head && e.role === 'upsell'));
    }
  });

  test("the database's planner has statistics of the seeded conversions, whether or not it gathers them on its own", async () => {
    const database = openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, poolSize: 1 });
    try {
      // The rows the statistics counted: PostgreSQL's estimate of the table, SQLite's first number of an index's statistics.
      const counted =
        engine === 'postgres'
          ? await sql<{ rows: number }>`select reltuples as rows from pg_class where relname = 'conversions'`.execute(database.db)
          : await sql<{ rows: string }>`select stat as rows from conv.sqlite_stat1 where tbl = 'conversions' limit 1`.execute(database.db);
      assert.equal(Number.parseInt(String(counted.rows[0]?.rows), 10), 200);
    } finally {
      await database.close();
    }
  });

  test('the seeded account has 5 assets with their bytes where the service reads them (S3 when configured), in folders', async () => {
    const key = lastLine(succeeded(await cli(store, ['keys', 'create', '--account', 'shop'])).stdout);
    if (s3) {
      const local = fs.existsSync(`${store.dataDir}/blobs`) ? fs.readdirSync(`${store.dataDir}/blobs`, { recursive: true, withFileTypes: true }) : [];
      assert.deepEqual(
        local.filter((entry) => entry.isFile()).map((entry) => entry.name),
        [],
        'no bytes on local disk when S3 is configured',
      );
    }
    await withApp(
      store,
      async (app) => {
        const response = await app.inject({ url: '/api/v1/assets', headers: { 'x-api-key': key } });
        assert.equal(response.statusCode, 200, response.body);
        const { entries, totalEntries } = response.json();
        assert.equal(totalEntries, 5);
        assert.ok(
          entries.some((e: { folder: string }) => e.folder !== ''),
          'assets are in folders',
        );
        const image = entries.find((e: { image: boolean; url: string | null }) => e.image && e.url === null);
        assert.ok(image, 'a local image');
        assert.ok(Number.isInteger(image.width) && image.width > 0);
        assert.ok(Number.isInteger(image.height) && image.height > 0);
        assert.ok(
          entries.some((e: { script: boolean }) => e.script),
          'a script',
        );
        const content = await app.inject({ url: `/api/v1/assets/${image.id}/content`, headers: { 'x-api-key': key } });
        assert.equal(content.statusCode, 200);
        assert.ok(content.rawPayload.length > 0);
        assert.match(String(content.headers['content-type']), /^image\//);
      },
      blobs,
    );
  });
});

describe('migrate', () => {
  test('names the migrations it applies, and says the schema is up to date when there are none', async () => {
    const store = await blankStore('sqlite');
    try {
      const first = succeeded(await cli(store, ['migrate'])).stdout.trim();
      assert.match(
        first,
        /^applied: 0001-initial, 0002-assets, .*0006-conversions-file, 0007-columnar-index, 0008-cart-notifications, 0009-narrow-conversions, 0010-no-account-id-index, 0011-newest-conversion-ids, 0012-import-marks$/,
      );
      assert.equal(succeeded(await cli(store, ['migrate'])).stdout.trim(), 'the schema is up to date');
    } finally {
      await store.close();
    }
  });
});

describe('a bad environment value stops every command with a message naming the variable', () => {
  let store: Store;
  before(async () => {
    store = await blankStore('sqlite');
  });
  after(() => store?.close());

  const cases: [string, string][] = [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['RATE_LIMIT_PER_MINUTE', '-1'],
    ['TRUST_PROXY', 'not-an-address'],
    ['DATABASE_URL', 'mysql://localhost/acds'],
    ['LOG_LEVEL', 'loud'],
  ];
  for (const [variable, value] of cases) {
    test(`serve with ${variable}=${value} exits non-zero and names ${variable}`, async () => {
      const run = await cli(store, ['serve'], { PORT: '0', [variable]: value });
      assert.notEqual(run.code, 0, `stdout: ${run.stdout}`);
      assert.ok(run.stderr.includes(variable), `stderr names ${variable}: ${run.stderr}`);
      assert.ok(!/listening/.test(run.stdout), run.stdout);
      assert.ok(!/\n\s+at /.test(run.stderr), `a message, not a stack trace: ${run.stderr}`);
    });
  }

  test('other commands check the environment too: keys create with DATABASE_URL=mysql://... exits non-zero naming it', async () => {
    const run = await cli(store, ['keys', 'create'], { DATABASE_URL: 'mysql://localhost/acds' });
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /DATABASE_URL/);
  });
});

describeEachEngine('serve', (engine) => {
  let store: Store;
  let bootstrapKey: string | undefined;
  before(async () => {
    store = await blankStore(engine);
  });
  after(() => store?.close());

  async function startFresh(env: Record<string, string> = {}) {
    // spawnService sets BOOTSTRAP_API_KEY; an empty value counts as unset, as for every variable.
    return spawnService(store, { BOOTSTRAP_API_KEY: '', ...env });
  }

  async function waitFor(output: () => string, pattern: RegExp): Promise<RegExpExecArray> {
    for (let waited = 0; waited < 10_000; waited += 50) {
      const match = pattern.exec(output());
      if (match) return match;
      await sleep(50);
    }
    throw new Error(`no ${pattern} in:\n${output()}`);
  }

  test('on first start it migrates, prints its URL and a bootstrap key that works over real HTTP, and SIGTERM stops it cleanly', async () => {
    if (engine === 'sqlite') assert.ok(!fs.existsSync(sqliteFile(store.dataDir)), 'the data folder starts empty');
    const service = await startFresh();
    try {
      assert.match(service.baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.ok(!service.baseUrl.endsWith(':0'));
      const [, key] = await waitFor(service.output, /shown only once:\s*\n(acds_\S+)\s*\n/);
      assert.match(key!, KEY_SHAPE);
      bootstrapKey = key;

      const response = await fetch(`${service.baseUrl}/api/v1/conversions`, { headers: { 'X-API-Key': key! } });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.deepEqual(await response.json(), { entries: [], totalEntries: 0, page: 1, totalPages: 0 });
      assert.ok(response.headers.get('x-request-id'));
      assert.equal(response.headers.get('x-ratelimit-limit'), '60', 'the default limit is 60 a minute');

      const anonymous = await fetch(`${service.baseUrl}/api/v1/assets`);
      assert.equal(anonymous.status, 401);
      assert.equal(await anonymous.json(), 'missing API key');

      const openapi = await fetch(`${service.baseUrl}/openapi.json`);
      assert.equal(openapi.status, 200);
      assert.match((await openapi.json()).openapi, /^3\./);
    } finally {
      const code = await stopService(service, 'SIGTERM');
      assert.equal(code, 0, 'SIGTERM ends the service with status 0');
    }
    await assert.rejects(fetch(`${service.baseUrl}/api/v1/conversions`), 'nothing listens after SIGTERM');
  });

  test('on a later start it prints no new key, and the first key still works', async () => {
    assert.ok(bootstrapKey, 'the first start printed a key');
    const service = await startFresh();
    try {
      const response = await fetch(`${service.baseUrl}/api/v1/conversions`, { headers: { 'X-API-Key': bootstrapKey } });
      assert.equal(response.status, 200);
      await sleep(300);
      assert.ok(!/shown only once/.test(service.output()), service.output());
      assert.ok(!/acds_[A-Za-z0-9_-]{32}/.test(service.output()), 'no key is printed');
      const listed = succeeded(await cli(store, ['keys', 'list']))
        .stdout.trim()
        .split('\n');
      assert.equal(listed.length, 1, 'the account default still has just the one key');
      assert.ok(listed[0]!.startsWith(bootstrapKey.slice(0, 13)));
    } finally {
      assert.equal(await stopService(service, 'SIGTERM'), 0);
    }
  });

  test('a start that cannot listen exits 1 naming HOST and PORT, and makes no key: the next start shows the first key', async () => {
    const other = await blankStore(engine);
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as net.AddressInfo;
      const failed = await cli(other, ['serve'], { PORT: String(port) });
      assert.equal(failed.code, 1, failed.stderr);
      assert.match(failed.stderr, new RegExp(`cannot listen on HOST 127\\.0\\.0\\.1, PORT ${port}: .*EADDRINUSE`));
      assert.ok(!/shown only once/.test(failed.stdout), failed.stdout);
      const service = await spawnService(other, { BOOTSTRAP_API_KEY: '' });
      try {
        const [, key] = await waitFor(service.output, /shown only once:\s*\n(acds_\S+)\s*\n/);
        assert.equal((await fetch(`${service.baseUrl}/api/v1/conversions`, { headers: { 'X-API-Key': key! } })).status, 200);
      } finally {
        assert.equal(await stopService(service, 'SIGTERM'), 0);
      }
    } finally {
      taken.close();
      await other.close();
    }
  });

  test('with BOOTSTRAP_API_KEY set, that key is accepted and none is printed', async () => {
    const other = await blankStore(engine);
    try {
      const service = await spawnService(other);
      try {
        await sleep(300);
        assert.ok(!/shown only once/.test(service.output()), service.output());
        assert.ok(!service.output().includes(SERVICE_KEY), "the operator's key is not echoed");
        const response = await fetch(`${service.baseUrl}/api/v1/conversions`, { headers: { 'X-API-Key': SERVICE_KEY } });
        assert.equal(response.status, 200);
      } finally {
        assert.equal(await stopService(service, 'SIGTERM'), 0);
      }
    } finally {
      await other.close();
    }
  });

  test('a failure inside a request is a 500 "internal error" to the client and is logged with the request id', async () => {
    const other = await blankStore(engine);
    try {
      const service = await spawnService(other, { LOG_LEVEL: 'error' });
      try {
        const list = () => fetch(`${service.baseUrl}/api/v1/conversions`, { headers: { 'X-API-Key': SERVICE_KEY } });
        const database = openDatabase({ dataDir: other.dataDir, databaseUrl: other.databaseUrl, poolSize: 1 });
        try {
          const { id } = await database.db.selectFrom('accounts').select('id').where('name', '=', 'default').executeTakeFirstOrThrow();
          await insertConversions(database, id, [conversionRecord()]);
          assert.equal((await (await list()).json()).totalEntries, 1);
          // The table the route reads its page's entries from goes away under the running service.
          await sql`alter table conversions rename to conversions_moved_away`.execute(database.db);
        } finally {
          await database.close();
        }
        const response = await list();
        assert.equal(response.status, 500);
        const body = await response.text();
        assert.equal(body, '"internal error"');
        const requestId = response.headers.get('x-request-id');
        assert.ok(requestId);
        const logged = await waitFor(service.output, new RegExp(`^.*${requestId}.*$`, 'm'));
        assert.match(logged[0], /conversions|relation|table/i, 'the log line carries the details');
      } finally {
        await stopService(service, 'SIGTERM');
      }
    } finally {
      await other.close();
    }
  });
});
