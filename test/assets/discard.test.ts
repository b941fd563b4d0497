import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AccountService } from '../../src/accounts/service.js';
import { AssetService } from '../../src/assets/service.js';
import { AppError } from '../../src/errors.js';
import type { BlobStore } from '../../src/storage/blob-store.js';
import { FileBlobStore } from '../../src/storage/file-blob-store.js';
import { accountWithKey } from '../helpers/app.js';
import { describeEachEngine, freshDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * Bytes a write no longer needs are removed after it, or when it fails; if they cannot be
 * removed then, the write still answers for itself and the bytes wait on the journal for the
 * sweep: nothing acknowledged is lost, nothing is left that no asset uses (docs/api.md, "Durability").
 */
describeEachEngine('bytes that cannot be removed at once are left to the sweep', (engine) => {
  let database: TestDatabase;
  let files: FileBlobStore;
  let deletesFail = false;
  let assets: AssetService;
  let accountId: number;
  const content = (text: string) => new Map([['content', text]]);
  const journal = async () => (await database.db.selectFrom('blob_journal').select('blob_key').execute()).map((row) => row.blob_key);

  before(async () => {
    database = await freshDatabase(engine);
    files = new FileBlobStore(database.dataDir);
    const failingDeletes: BlobStore = {
      put: (key, source) => files.put(key, source),
      read: (key, range) => files.read(key, range),
      stat: (key) => files.stat(key),
      delete: (key) => (deletesFail ? Promise.reject(new Error('the store is unavailable')) : files.delete(key)),
      check: () => files.check(),
      close: () => files.close(),
    };
    assets = new AssetService(database, failingDeletes);
    ({ accountId } = await accountWithKey(new AccountService(database.db), 'sweeper'));
  });
  after(() => database.close());

  test('a create refused for a clash is that 400, though its staged bytes cannot be deleted; they stay journalled until the sweep', async () => {
    await assets.create(accountId, { fields: new Map([...content('first'), ['name', 'same.txt']]) });
    deletesFail = true;
    const refused = await assets.create(accountId, { fields: new Map([...content('second'), ['name', 'same.txt']]) }).catch((error) => error);
    deletesFail = false;
    assert.ok(refused instanceof AppError && refused.statusCode === 400, String(refused));
    assert.match(refused.message, /already exists/);
    const [left, ...more] = await journal();
    assert.deepEqual(more, []);
    assert.ok(left && (await files.stat(left)), 'the staged bytes wait on the journal');
    assert.equal(await assets.sweepOrphanedBlobs(0), 1);
    assert.equal(await files.stat(left), undefined);
    assert.deepEqual(await journal(), []);
  });

  test('a committed replacement is acknowledged though the old bytes cannot be deleted; they stay journalled until the sweep', async () => {
    const id = await assets.create(accountId, { fields: new Map([...content('old bytes'), ['name', 'replaced.txt']]) });
    const oldKey = (await database.db.selectFrom('assets').select('blob_key').where('id', '=', id).executeTakeFirstOrThrow()).blob_key!;
    deletesFail = true;
    await assets.update(accountId, id, { fields: content('new bytes') });
    deletesFail = false;
    assert.notEqual((await assets.forDownload(accountId, id)).blob_key, oldKey, 'the replacement is committed');
    assert.deepEqual(await journal(), [oldKey]);
    assert.equal(await assets.sweepOrphanedBlobs(0), 1);
    assert.equal(await files.stat(oldKey), undefined);
  });
});
