import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { CONVERSIONS_PAGE_SIZE, CONVERSIONS_SCHEMA, openConnection, sqliteFiles, WAL_SIZE_LIMIT_BYTES } from '../../src/db/sqlite/connection.js';

test('a large write leaves no write-ahead log larger than the limit once the log starts over, while another connection stays open', (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acds-wal-'));
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const writer = openConnection({ dataDir, readonly: false, cacheKiB: 8192 });
  // The service's connections stay open while the command line imports: the log outlives the import.
  const service = openConnection({ dataDir, readonly: false, cacheKiB: 8192 });
  t.after(() => {
    writer.close();
    service.close();
  });
  const walFile = `${sqliteFiles(dataDir).conversions}-wal`;

  writer.exec(`create table ${CONVERSIONS_SCHEMA}.filler (bytes blob)`);
  const megabytes = Math.ceil((WAL_SIZE_LIMIT_BYTES * 1.5) / 2 ** 20);
  writer.transaction(() => {
    for (let index = 0; index < megabytes; index++) writer.prepare(`insert into ${CONVERSIONS_SCHEMA}.filler values (zeroblob(1048576))`).run();
  })();
  assert.ok(fs.statSync(walFile).size > WAL_SIZE_LIMIT_BYTES, 'the large write went through the log');

  // The next write after the log was copied into the database starts the log over, and cuts it back.
  writer.prepare(`insert into ${CONVERSIONS_SCHEMA}.filler values (x'00')`).run();
  assert.ok(fs.statSync(walFile).size <= WAL_SIZE_LIMIT_BYTES, `the log is ${fs.statSync(walFile).size} bytes`);
  assert.deepEqual(service.prepare(`select count(*) as n from ${CONVERSIONS_SCHEMA}.filler`).get(), { n: megabytes + 1 });
});

test('a new conversions file gets the large pages and an existing one keeps its own, with its rows', (t) => {
  const pageSizes = (dataDir: string) => {
    const connection = openConnection({ dataDir, readonly: false, cacheKiB: 8192 });
    try {
      return {
        main: connection.pragma('main.page_size', { simple: true }),
        conversions: connection.pragma(`${CONVERSIONS_SCHEMA}.page_size`, { simple: true }),
      };
    } finally {
      connection.close();
    }
  };
  const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'acds-pages-'));
  t.after(() => fs.rmSync(fresh, { recursive: true, force: true }));
  assert.deepEqual(pageSizes(fresh), { main: 4096, conversions: CONVERSIONS_PAGE_SIZE });

  // A data directory of a version before the large pages: its file was made with SQLite's default.
  const existing = fs.mkdtempSync(path.join(os.tmpdir(), 'acds-pages-'));
  t.after(() => fs.rmSync(existing, { recursive: true, force: true }));
  const before = new SQLite(sqliteFiles(existing).conversions);
  before.pragma('journal_mode = WAL');
  before.exec("create table kept (text text); insert into kept values ('a row')");
  before.close();
  assert.deepEqual(pageSizes(existing), { main: 4096, conversions: 4096 });
  const after = openConnection({ dataDir: existing, readonly: false, cacheKiB: 8192 });
  t.after(() => after.close());
  assert.deepEqual(after.prepare(`select text from ${CONVERSIONS_SCHEMA}.kept`).all(), [{ text: 'a row' }]);
});
