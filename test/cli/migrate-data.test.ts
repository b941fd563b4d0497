import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { openDatabase } from '../../src/db/database.js';
import { freshDatabase, tempDir, type TestDatabase } from '../helpers/database.js';
import { lastLine, runCli, spawnService, stopService, succeeded, type CliRun, type ServiceProcess } from '../helpers/processes.js';
import { startS3Server, type TestS3Server } from '../helpers/s3.js';

/**
 * `migrate-data`, as an operator runs it: the embedded default (SQLite + files in DATA_DIR) copied
 * to PostgreSQL + S3, then the real service started on the copy and compared over HTTP with the
 * service on the original. Needs TEST_DATABASE_URL for the destination database.
 */

const KEY_SHAPE = /^acds_[A-Za-z0-9_-]{32}$/;
const TABLES = ['accounts', 'api_keys', 'conversions', 'conversion_versions', 'assets', 'cart_receivers', 'cart_events', 'blob_journal'] as const;

/** The environment of a command: only what the test sets, none of the acds variables of the test's own environment. */
function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean = { ...process.env };
  for (const name of Object.keys(clean)) {
    if (
      /^(PORT|HOST|DATA_DIR|DATABASE_URL|REDIS_URL|RATE_LIMIT_PER_MINUTE|TRUST_PROXY|MAX_UPLOAD_BYTES|BOOTSTRAP_API_KEY|LOG_LEVEL|S3_.*|MIGRATE_TO_.*)$/.test(
        name,
      )
    ) {
      delete clean[name];
    }
  }
  return { ...clean, LOG_LEVEL: 'warn', ...env };
}

function cli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return runCli(args, cliEnv(env), 120_000);
}

async function getJson(service: ServiceProcess, url: string, key: string): Promise<any> {
  const response = await fetch(`${service.baseUrl}${url}`, { headers: { 'X-API-Key': key } });
  assert.equal(response.status, 200, `${url}: ${await response.clone().text()}`);
  return response.json();
}

const ready = Boolean(process.env.TEST_DATABASE_URL);

const CART_EVENT = {
  received_at: 1_767_225_600,
  occurred_at: 1_767_225_590,
  cart: 'generic',
  event_key: 'evt-migrated',
  event: 'refund',
  cart_event: 'refund',
  receipt: 'R-MIGRATED',
  original_receipt: null,
  test: 0,
  status: 'recorded',
  problem: null,
  conversion_id: null,
  // Kept before NULs were replaced on receipt: SQLite holds one, PostgreSQL's text cannot.
  payload: '{"event":"refund","receipt":"R-MIGRATED","note":"a\u0000b"}',
};

describe('migrate-data from SQLite + local files to PostgreSQL + S3', {
  skip: ready ? false : 'needs TEST_DATABASE_URL (a PostgreSQL server for the destination)',
}, () => {
  const sourceDir = ready ? tempDir('acds-migrate-source-') : '';
  const destinationDir = ready ? tempDir('acds-migrate-destination-') : '';
  const sourceEnv = { DATA_DIR: sourceDir, DATABASE_URL: '' };
  let destination: TestDatabase;
  let s3: TestS3Server;
  let migrateArgs: string[];
  let key: string;
  let revokedKey: string;
  let deletedAssetId: number;
  let run: CliRun;
  let sourceService: ServiceProcess | undefined;
  let destinationService: ServiceProcess | undefined;

  const s3Env = () => ({
    S3_BUCKET: s3.options.bucket,
    S3_ENDPOINT: s3.options.endpoint!,
    S3_REGION: s3.options.region,
    S3_ACCESS_KEY_ID: s3.options.accessKeyId!,
    S3_SECRET_ACCESS_KEY: s3.options.secretAccessKey!,
    S3_FORCE_PATH_STYLE: 'true',
  });
  const destinationEnv = () => ({ DATA_DIR: destinationDir, DATABASE_URL: destination.databaseUrl!, ...s3Env() });

  /** Rows per table in the destination, and the objects in its bucket with their sizes. */
  async function destinationState() {
    const rows: Record<string, number> = {};
    for (const table of TABLES) {
      const { n } = await destination.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      rows[table] = Number(n);
    }
    const client = new S3Client({
      region: s3.options.region,
      endpoint: s3.options.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.options.accessKeyId!, secretAccessKey: s3.options.secretAccessKey! },
    });
    try {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.options.bucket }));
      const objects = (listed.Contents ?? []).map((o) => `${o.Key}:${o.Size}:${o.ETag}`).sort();
      return { rows, objects };
    } finally {
      client.destroy();
    }
  }

  before(async () => {
    // The source: the embedded default, filled as an operator would.
    succeeded(await cli(['seed', '--conversions', '300', '--assets', '8'], sourceEnv));
    key = lastLine(succeeded(await cli(['keys', 'create'], sourceEnv)).stdout);
    revokedKey = lastLine(succeeded(await cli(['keys', 'create'], sourceEnv)).stdout);
    assert.match(key, KEY_SHAPE);
    assert.match(revokedKey, KEY_SHAPE);
    succeeded(await cli(['keys', 'revoke', revokedKey.slice(0, 13)], sourceEnv));
    succeeded(await cli(['carts', 'connect', 'generic', '--secret', 'whsec_migrated-secret'], sourceEnv));
    // A cart's notification kept, and the asset with the largest id deleted: its id is never to be handed out again.
    const source = openDatabase({ dataDir: sourceDir, databaseUrl: undefined, poolSize: 1 });
    try {
      const { id: accountId } = await source.db.selectFrom('accounts').select('id').where('name', '=', 'default').executeTakeFirstOrThrow();
      await source.db
        .insertInto('cart_events')
        .values({ ...CART_EVENT, account_id: accountId })
        .execute();
      const { id: lastAsset } = await source.db
        .selectFrom('assets')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirstOrThrow();
      deletedAssetId = Number(lastAsset);
      await source.db.deleteFrom('assets').where('id', '=', deletedAssetId).execute();
    } finally {
      await source.close();
    }

    destination = await freshDatabase('postgres');
    s3 = await startS3Server();
    migrateArgs = [
      'migrate-data',
      '--to-database',
      destination.databaseUrl!,
      '--to-s3-bucket',
      s3.options.bucket,
      '--to-s3-endpoint',
      s3.options.endpoint!,
      '--to-s3-region',
      s3.options.region,
      '--to-s3-access-key-id',
      s3.options.accessKeyId!,
      '--to-s3-secret-access-key',
      s3.options.secretAccessKey!,
      '--to-s3-force-path-style',
      // Small batches, so that 300 conversions take several pages of the keyset walk.
      '--batch-size',
      '64',
    ];
    run = await cli(migrateArgs, sourceEnv);

    // An empty BOOTSTRAP_API_KEY: neither service adds a key of its own.
    sourceService = await spawnService({ dataDir: sourceDir, databaseUrl: undefined }, { BOOTSTRAP_API_KEY: '', RATE_LIMIT_PER_MINUTE: '0' });
    destinationService = await spawnService(
      { dataDir: destinationDir, databaseUrl: destination.databaseUrl },
      { BOOTSTRAP_API_KEY: '', RATE_LIMIT_PER_MINUTE: '0', ...s3Env() },
    );
  });

  after(async () => {
    if (sourceService) await stopService(sourceService);
    if (destinationService) await stopService(destinationService);
    await s3?.close();
    await destination?.close();
    for (const dir of [sourceDir, destinationDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('it exits 0, reports progress on standard error and the rows and bytes copied on standard output', () => {
    succeeded(run);
    assert.match(run.stdout, /^accounts\s+1$/m);
    assert.match(run.stdout, /^api_keys\s+2$/m);
    assert.match(run.stdout, /^conversions\s+300$/m);
    assert.match(run.stdout, /^assets\s+7$/m);
    assert.match(run.stdout, /^cart_receivers\s+1$/m);
    assert.match(run.stdout, /^cart_events\s+1$/m);
    assert.match(run.stdout, /^asset bytes\s+[1-7] files, [1-9]\d* bytes copied$/m);
    assert.match(run.stderr, /conversions: 300 of 300 rows copied/);
    assert.ok(!run.stdout.includes('rows copied'), 'progress stays off standard output');
  });

  test('the copy serves the same conversions, entry by entry, to the same key', async () => {
    const first = await getJson(sourceService!, '/api/v1/conversions', key);
    assert.equal(first.totalEntries, 300);
    assert.equal(first.totalPages, 3);
    for (const page of [1, 2, 3]) {
      const url = `/api/v1/conversions?page=${page}`;
      const [original, copy] = await Promise.all([getJson(sourceService!, url, key), getJson(destinationService!, url, key)]);
      assert.equal(copy.totalEntries, 300);
      assert.equal(copy.entries.length, original.entries.length);
      for (let i = 0; i < original.entries.length; i++) assert.deepEqual(copy.entries[i], original.entries[i], `page ${page}, entry ${i}`);
      assert.deepEqual(copy, original);
    }
    // A filter on a tracking code answers the same too.
    const withCode = first.entries.find((e: { tracking_codes: string[] }) => e.tracking_codes.length > 0);
    if (withCode) {
      const url = `/api/v1/conversions?tracking_codes=${encodeURIComponent(withCode.tracking_codes[0])}`;
      const [original, copy] = await Promise.all([getJson(sourceService!, url, key), getJson(destinationService!, url, key)]);
      assert.ok(original.totalEntries > 0);
      assert.deepEqual(copy, original);
    }
  });

  test("the copy lists the same assets and serves each one's bytes identically, privately and publicly", async () => {
    const original = await getJson(sourceService!, '/api/v1/assets', key);
    const copy = await getJson(destinationService!, '/api/v1/assets', key);
    assert.equal(original.totalEntries, 7, 'the eight seeded but the one deleted');
    const sameOrigin = (body: unknown, service: ServiceProcess) => JSON.parse(JSON.stringify(body).replaceAll(service.baseUrl, 'ORIGIN'));
    assert.deepEqual(sameOrigin(copy, destinationService!), sameOrigin(original, sourceService!));

    let local = 0;
    for (const entry of original.entries as { id: number; public_url: string | null; url: string | null }[]) {
      const url = `/api/v1/assets/${entry.id}/content`;
      const [a, b] = await Promise.all(
        [sourceService!, destinationService!].map((s) => fetch(`${s.baseUrl}${url}`, { headers: { 'X-API-Key': key }, redirect: 'manual' })),
      );
      assert.equal(b!.status, a!.status, url);
      if (entry.public_url === null) {
        assert.equal(b!.headers.get('location'), a!.headers.get('location'), 'a remote asset redirects to the same url');
        continue;
      }
      local++;
      assert.equal(a!.status, 200);
      assert.equal(b!.headers.get('etag'), a!.headers.get('etag'));
      assert.equal(b!.headers.get('content-type'), a!.headers.get('content-type'));
      const bytes = Buffer.from(await a!.arrayBuffer());
      assert.ok(bytes.length > 0);
      assert.ok(Buffer.from(await b!.arrayBuffer()).equals(bytes), `the bytes of asset ${entry.id}`);
      // The public URL (account handle + public id) is the same path on the copy.
      const publicPath = entry.public_url.slice(sourceService!.baseUrl.length);
      const published = await fetch(`${destinationService!.baseUrl}${publicPath}`);
      assert.equal(published.status, 200, publicPath);
      assert.ok(Buffer.from(await published.arrayBuffer()).equals(bytes));
    }
    assert.ok(local > 0, 'some assets have bytes');
    const [, files, total] = /^asset bytes\s+(\d+) files, (\d+) bytes/m.exec(run.stdout) ?? [];
    assert.equal(Number(files), local);
    const sizes = (original.entries as { size: number | null; public_url: string | null }[]).filter((e) => e.public_url).map((e) => e.size!);
    assert.equal(
      Number(total),
      sizes.reduce((sum, size) => sum + size, 0),
    );
  });

  test('the key works on the copy and the revoked key is still refused', async () => {
    for (const service of [sourceService!, destinationService!]) {
      const ok = await fetch(`${service.baseUrl}/api/v1/conversions`, { headers: { 'X-API-Key': key } });
      assert.equal(ok.status, 200);
      const revoked = await fetch(`${service.baseUrl}/api/v1/conversions`, { headers: { 'X-API-Key': revokedKey } });
      assert.equal(revoked.status, 401);
    }
  });

  test("the copy has the source's connected carts, cart events and conversions' versions", async () => {
    for (const url of ['/api/v1/cart-receivers', '/api/v1/cart-events']) {
      const kept = JSON.stringify(await getJson(sourceService!, url, key)).replaceAll('\\u0000', '\uFFFD');
      assert.deepEqual(await getJson(destinationService!, url, key), JSON.parse(kept), url);
    }
    assert.equal((await getJson(destinationService!, '/api/v1/cart-events', key)).entries[0].receipt, 'R-MIGRATED');
    const source = openDatabase({ dataDir: sourceDir, databaseUrl: undefined, poolSize: 1 });
    try {
      const versions = (db: typeof source.db) => db.selectFrom('conversion_versions').selectAll().orderBy('account_id').execute();
      const copied = await versions(destination.db);
      assert.ok(copied.length > 0);
      assert.deepEqual(
        copied.map((row) => ({ ...row, version: Number(row.version), newest_id: Number(row.newest_id) })),
        await versions(source.db),
      );
    } finally {
      await source.close();
    }
  });

  test('new rows on the copy get fresh ids past the copied ones and past the ids the source handed out (the sequences were moved)', async () => {
    const listed = await getJson(destinationService!, '/api/v1/assets', key);
    const maxId = Math.max(...listed.entries.map((e: { id: number }) => e.id), deletedAssetId);
    assert.ok(deletedAssetId > Math.max(...listed.entries.map((e: { id: number }) => e.id)), 'the source deleted its newest asset');
    const form = new FormData();
    form.set('name', 'after-migration.txt');
    form.set('content', 'written after the migration');
    const created = await fetch(`${destinationService!.baseUrl}/api/v1/assets`, { method: 'POST', headers: { 'X-API-Key': key }, body: form });
    assert.equal(created.status, 200, await created.clone().text());
    const { id } = (await created.json()) as { id: string };
    assert.ok(Number(id) > maxId, `new asset id ${id} is past ${maxId}`);
    const content = await fetch(`${destinationService!.baseUrl}/api/v1/assets/${id}/content`, { headers: { 'X-API-Key': key } });
    assert.equal(await content.text(), 'written after the migration');

    // A new key (api_keys) and a new account (accounts) on the copy, through the command line.
    const newKey = lastLine(succeeded(await cli(['keys', 'create', '--account', 'newcomer'], destinationEnv())).stdout);
    assert.match(newKey, KEY_SHAPE);
    const ids = await destination.db.selectFrom('accounts').select(['id', 'name']).orderBy('id').execute();
    assert.deepEqual(
      ids.map((a) => a.name),
      ['default', 'newcomer'],
    );
    const fresh = await fetch(`${destinationService!.baseUrl}/api/v1/assets`, { headers: { 'X-API-Key': newKey } });
    assert.equal(fresh.status, 200);
    assert.equal(((await fresh.json()) as { totalEntries: number }).totalEntries, 0, "the new account sees none of default's assets");
  });

  test('run again on the same destination, it exits non-zero with a clear message and changes nothing', async () => {
    const before = await destinationState();
    assert.ok(before.objects.length > 0);
    const again = await cli(migrateArgs, sourceEnv);
    assert.notEqual(again.code, 0, again.stdout);
    assert.match(again.stderr, /destination database already holds 2 account\(s\)/);
    assert.match(again.stderr, /never merges/);
    assert.ok(!/\n\s+at /.test(again.stderr), `a message, not a stack trace: ${again.stderr}`);
    assert.equal(again.stdout, '');
    assert.deepEqual(await destinationState(), before);
  });

  test('options that cannot work are refused by name before anything is touched', async () => {
    const noBytes = await cli(['migrate-data', '--to-database', destination.databaseUrl!], sourceEnv);
    assert.notEqual(noBytes.code, 0);
    assert.match(noBytes.stderr, /--to-s3-bucket/);
    const badBucket = await cli(['migrate-data', '--to-database', destination.databaseUrl!, '--to-s3-bucket', 'Not_A_Bucket'], sourceEnv);
    assert.notEqual(badBucket.code, 0);
    assert.match(badBucket.stderr, /--to-s3-bucket must be a bucket name/);
    const badUrl = await cli(['migrate-data', '--to-database', 'mysql://x/y', '--to-data-dir', destinationDir], sourceEnv);
    assert.notEqual(badUrl.code, 0);
    assert.match(badUrl.stderr, /--to-database must start with postgres:\/\//);
  });
});

describe('migrate-data that fails part-way', { skip: ready ? false : 'needs TEST_DATABASE_URL (a PostgreSQL server for the destination)' }, () => {
  const sourceDir = ready ? tempDir('acds-migrate-source-') : '';
  const bytesDir = ready ? tempDir('acds-migrate-destination-') : '';
  const sourceEnv = { DATA_DIR: sourceDir, DATABASE_URL: '' };
  let destination: TestDatabase;

  before(async () => {
    succeeded(await cli(['seed', '--conversions', '150', '--assets', '6'], sourceEnv));
    destination = await freshDatabase('postgres');
  });
  after(async () => {
    await destination?.close();
    for (const dir of [sourceDir, bytesDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const counts = async () => {
    const counted: Record<string, number> = {};
    for (const table of TABLES) {
      const { n } = await destination.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      counted[table] = Number(n);
    }
    return counted;
  };
  const args = () => ['migrate-data', '--to-database', destination.databaseUrl!, '--to-data-dir', bytesDir, '--batch-size', '50'];

  test('an asset whose bytes are missing fails the run and leaves the destination database empty; once fixed, a rerun succeeds', async () => {
    // Take the bytes of the last local asset away, so that the failure comes after every other table was copied.
    const blobs = path.join(sourceDir, 'blobs');
    const files = fs.readdirSync(blobs, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    const last = files
      .map((e) => path.join(e.parentPath, e.name))
      .sort()
      .at(-1)!;
    const hidden = `${last}.hidden`;
    fs.renameSync(last, hidden);

    const failed = await cli(args(), sourceEnv);
    assert.notEqual(failed.code, 0, failed.stdout);
    assert.match(failed.stderr, /asset \d+ \(bytes under [^)]+\): the bytes are missing from the source store/);
    assert.match(failed.stderr, /conversions: 150 of 150 rows copied/, 'it failed after the conversions were in');
    assert.equal(failed.stdout, '');
    assert.deepEqual(await counts(), Object.fromEntries(TABLES.map((table) => [table, 0])));

    fs.renameSync(hidden, last);
    const rerun = succeeded(await cli(args(), sourceEnv));
    assert.match(rerun.stdout, /^conversions\s+150$/m);
    assert.match(rerun.stdout, /^assets\s+6$/m);
    const after = await counts();
    assert.equal(after.conversions, 150);
    assert.equal(after.assets, 6);
    assert.ok(fs.readdirSync(path.join(bytesDir, 'blobs'), { recursive: true }).length > 0, 'the bytes are under --to-data-dir');
  });
});
