/**
 * The columnar index must hold any number of rows within its memory limit: everything it keeps
 * is DuckDB's own table data, which spills to disk. An index kept in memory (ART) failed the
 * catch-up once it outgrew the limit, and every question after it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { MIN_COLUMNAR_MEMORY_MIB } from '../../src/config.js';
import { CONVERSION_INDEX_LAYOUT } from '../../src/conversions/questions.js';
import { duckDbSettings, incomingTableStatements, indexingStatements, layoutStatements, reorderByTimeStatements } from '../../src/db/columnar/queries.js';
import { tempDir } from '../helpers/database.js';

const ROWS = 600_000;
const BATCH = 5_000;

test(`the index takes ${ROWS} rows in batches as a catch-up does, and puts them in time order, within the smallest memory limit (${MIN_COLUMNAR_MEMORY_MIB} MB)`, async () => {
  const { table, columns, hashed, sourceLayout } = CONVERSION_INDEX_LAYOUT;
  const dir = tempDir();
  const instance = await DuckDBInstance.create(path.join(dir, 'index.duckdb'), duckDbSettings(`${MIN_COLUMNAR_MEMORY_MIB}MB`, 1));
  const connection = await instance.connect();
  try {
    for (const statement of [...layoutStatements(table, columns, hashed), ...incomingTableStatements(columns, hashed, sourceLayout)])
      await connection.run(statement);
    for (let first = 1; first <= ROWS; first += BATCH) {
      await connection.run('BEGIN TRANSACTION');
      // Entries as the import writes them, with a buyer, a zip code and an address of their own to
      // each few rows, and times in no order.
      await connection.run(`INSERT INTO incoming SELECT id, 1, 1767225600 + (id * 7919 % ${ROWS}), json_object(
          'cart_integration', 'clickbank', 'receipt', 'R-' || id, 'amount', (id % 15000) / 100, 'user_id', 'u' || (id * 7919 % 400000),
          'zip_code', lpad(CAST(id * 31 % 99999 AS VARCHAR), 5, '0'), 'email', 'buyer' || (id * 13 % 250000) || '@example.com',
          'country', 'US', 'mobile', id % 2 = 0, 'tracking_codes', ['tc-' || (id % 7)])::VARCHAR
        FROM (SELECT range AS id FROM range(${first}, ${first + BATCH}))`);
      for (const statement of indexingStatements(table, columns, hashed, sourceLayout)) await connection.run(statement);
      await connection.run('COMMIT');
    }
    // As the index does after a large catch-up: written to the file, then put in time order.
    await connection.run('CHECKPOINT');
    await connection.run('BEGIN TRANSACTION');
    for (const { sql, params } of reorderByTimeStatements(table, 0)) await connection.run(sql, params.values, params.types);
    await connection.run('COMMIT');
    await connection.run('CHECKPOINT');
    const [count, amount, inOrder] = (
      await connection.runAndReadAll(
        `SELECT count(*), sum(amount), bool_and(before IS NULL OR created_at >= before) FROM (SELECT amount, created_at, lag(created_at) OVER (ORDER BY rowid) AS before FROM ${table})`,
      )
    ).getRows()[0]!;
    assert.equal(Number(count), ROWS);
    assert.ok(Number(amount) > 0);
    assert.equal(inOrder, true, 'stored in time order');
  } finally {
    connection.closeSync();
    instance.closeSync();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
