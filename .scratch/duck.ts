import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'node:fs';
import { syntheticConversions, seededRandom } from '../src/conversions/synthetic.js';
import { conversionCatalogue } from '../src/conversions/schema.js';
const N = Number(process.argv[2] ?? 1000000);
const file = '/tmp/exp.duckdb';
fs.rmSync(file, { force: true }); fs.rmSync(file + '.wal', { force: true });
const inst = await DuckDBInstance.create(file, { threads: '1', memory_limit: '128MB' });
const con = await inst.connect();
const cols = [...conversionCatalogue.values()].filter((c) => c.type !== 'stringArray' && c.name !== 'id');
const t = (c: any) => ({ integer: 'BIGINT', number: 'DOUBLE', string: 'VARCHAR', timestamp: 'BIGINT', boolean: 'TINYINT' } as any)[c.type];
await con.run(`CREATE TABLE c (id BIGINT, account_id INTEGER, ${cols.map((c) => `${c.name} ${t(c)}`).join(', ')})`);
await con.run(`CREATE TABLE codes (conversion_id BIGINT, account_id INTEGER, code VARCHAR)`);
const rows: any[] = [];
let id = 0;
for (const r of syntheticConversions(N, { random: seededRandom(1) })) { rows.push({ ...r, id: ++id, created_at: Date.parse(r.created_at as string) / 1000, mobile: r.mobile ? 1 : 0 }); }
console.log('generated', rows.length, process.memoryUsage().rss >> 20);
let t0 = performance.now();
const BATCH = 50000;
for (let i = 0; i < rows.length; i += BATCH) {
  await con.run('BEGIN');
  const a = await con.createAppender('c');
  const b = await con.createAppender('codes');
  for (const r of rows.slice(i, i + BATCH)) {
    a.appendBigInt(BigInt(r.id)); a.appendInteger(1);
    for (const c of cols) {
      const v = r[c.name];
      if (v === null || v === undefined) a.appendNull();
      else if (c.type === 'string') a.appendVarchar(v);
      else if (c.type === 'number') a.appendDouble(v);
      else if (c.type === 'boolean') a.appendTinyInt(v);
      else a.appendBigInt(BigInt(v));
    }
    a.endRow();
    for (const code of r.tracking_codes) { b.appendBigInt(BigInt(r.id)); b.appendInteger(1); b.appendVarchar(code); b.endRow(); }
  }
  a.closeSync(); b.closeSync();
  await con.run('COMMIT');
}
console.log('append ms', performance.now() - t0, 'rows/s', N / ((performance.now() - t0) / 1000), process.memoryUsage().rss >> 20);
const q = async (label: string, sqlText: string, params: any[] = []) => {
  const s = performance.now();
  const r = await con.runAndReadAll(sqlText, params);
  const rows = r.getRows();
  console.log(label, (performance.now() - s).toFixed(1), 'ms', JSON.stringify(rows.slice(0, 2), (k, v) => typeof v === 'bigint' ? Number(v) : v).slice(0, 100));
};
for (let k = 0; k < 2; k++) {
await q('count all', 'select count(*) from c where account_id=$1', [1]);
await q('two carts amount', 'select count(*) from c where account_id=$1 and cart_integration in ($2,$3) and amount >= $4', [1, 'clickbank', 'buygoods', 40 + k]);
await q('page ids two carts', 'select id from c where account_id=$1 and cart_integration in ($2,$3) and amount >= $4 order by id limit 100 offset 300', [1, 'clickbank', 'buygoods', 40 + k]);
await q('month source', 'select count(*) from c where account_id=$1 and created_at between $2 and $3 and utm_source=$4', [1, 1740000000 + k * 1000, 1742600000, 'google']);
await q('country window', 'select count(*) from c where account_id=$1 and created_at between $2 and $3 and country=$4', [1, 1740000000 + k * 1000, 1752600000, 'DE']);
await q('page ids country', 'select id from c where account_id=$1 and created_at between $2 and $3 and country=$4 order by id limit 100', [1, 1740000000 + k * 1000, 1752600000, 'DE']);
await q('codes', 'select count(*) from c where account_id=$1 and id in (select conversion_id from codes where account_id=$1 and code=$2)', [1, 'tc-7']);
await q('page ids unfiltered deep', 'select id from c where account_id=$1 and id >= $2 order by id limit 100', [1, 500000]);
await q('delta count', 'select count(*) from c where account_id=$1 and id > $2 and id <= $3 and amount >= $4', [1, 999000, 1000000, 40]);
}
console.log('rss', process.memoryUsage().rss >> 20);
