import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { AccountService } from '../../src/accounts/service.js';
import { AssetService } from '../../src/assets/service.js';
import { FileBlobStore } from '../../src/storage/file-blob-store.js';
import { accountWithKey } from '../helpers/app.js';
import { describeEachEngine, freshDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * Writes to one asset sent at the same time: each is kept, or refused with nothing changed, and
 * the stored entry (what lists show) always says what the row holds; bytes no asset uses are
 * never left behind.
 */
describeEachEngine('concurrent writes to one asset', (engine) => {
  let database: TestDatabase;
  let files: FileBlobStore;
  let assets: AssetService;
  let accountId: number;
  const fields = (entries: Record<string, string>) => ({ fields: new Map(Object.entries(entries)) });
  const blobFiles = () => {
    const dir = path.join(database.dataDir, 'blobs', String(accountId));
    return fs.existsSync(dir) ? fs.readdirSync(dir).map((name) => `${accountId}/${name}`) : [];
  };
  const blobKeys = async () =>
    (await database.db.selectFrom('assets').select('blob_key').where('account_id', '=', accountId).execute()).map((row) => row.blob_key);
  /** The asset as GET shows it, and as the list shows it (its stored entry). */
  const shown = async (id: number) => {
    const entry = await assets.get(accountId, id, 'http://acds.test');
    const listed = await assets.list(accountId, Date.now(), { id: String(id) }, 'http://acds.test').read();
    return { entry, listed: JSON.parse(`[${listed.entriesJson}]`)[0] };
  };

  before(async () => {
    database = await freshDatabase(engine);
    files = new FileBlobStore(database.dataDir);
    assets = new AssetService(database, files);
    ({ accountId } = await accountWithKey(new AccountService(database.db), 'concurrent'));
  });
  after(() => database.close());

  test('attribute updates sent together are all kept, and the list shows what GET shows', async () => {
    const id = await assets.create(accountId, fields({ name: 'tracker.js', content: 'console.log(1)', script: 'f' }));
    const changes: Record<string, string>[] = [{ async: 't' }, { defer: 't' }, { script: 't' }, { style: 't' }];
    await Promise.all(changes.map((change) => assets.update(accountId, id, fields(change))));
    const { entry, listed } = await shown(id);
    assert.deepEqual([entry.async, entry.defer, entry.script, entry.style], [true, true, true, true]);
    assert.deepEqual(listed, entry);
  });

  test('a rename and a change of attributes sent together are both kept', async () => {
    const id = await assets.create(accountId, fields({ name: 'before.js', content: 'console.log(2)' }));
    await Promise.all([assets.update(accountId, id, fields({ name: 'after.js' })), assets.update(accountId, id, fields({ async: 't' }))]);
    const { entry, listed } = await shown(id);
    assert.deepEqual([entry.name, entry.async], ['after.js', true]);
    assert.deepEqual(listed, entry);
  });

  test('a delete and a replacement of the bytes sent together leave no bytes that no asset uses', async () => {
    for (let round = 0; round < 10; round++) {
      const id = await assets.create(accountId, fields({ name: `raced-${round}.txt`, content: 'old bytes' }));
      const outcomes = await Promise.allSettled([assets.update(accountId, id, fields({ content: 'new bytes' })), assets.remove(accountId, id)]);
      assert.equal(outcomes[1]!.status, 'fulfilled', 'the delete is kept');
      await assert.rejects(assets.get(accountId, id, 'http://acds.test'), /no asset/, `round ${round}: the asset is gone`);
      assert.deepEqual(blobFiles().sort(), (await blobKeys()).sort(), `round ${round}: its bytes, old and new, are gone too`);
    }
  });
});
