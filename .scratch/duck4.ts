import { DuckDBInstance, listValue } from '@duckdb/node-api';
const inst = await DuckDBInstance.create('/tmp/exp.duckdb', { threads: '1', memory_limit: '128MB' });
const con = await inst.connect();
const q = async (label: string, sqlText: string, params: any[] = []) => {
  const s = performance.now();
  const r = await con.runAndReadAll(sqlText, params);
  const rows = r.getRows();
  console.log(label, (performance.now() - s).toFixed(1), 'ms', JSON.stringify(rows.slice(0, 2), (k, v) => typeof v === 'bigint' ? Number(v) : v).slice(0, 100));
};
for (let k = 0; k < 3; k++) {
await q('literal in', `select count(*) from c where country in ('DE','US')`);
await q('literal or', `select count(*) from c where country = 'DE' or country = 'US'`);
await q('list_contains', `select count(*) from c where list_contains($1, country)`, [listValue(['DE','US'])]);
await q('any', `select count(*) from c where country = any($1)`, [listValue(['DE','US'])]);
await q('semi', `select count(*) from c where country in (select unnest($1))`, [listValue(['DE','US'])]);
await q('sum eq', `select count(*) from c where (country = $1) or (country = $2)`, ['DE','US']);
await q('eq DE', `select count(*) from c where country = $1`, ['DE']);
await q('eq US', `select count(*) from c where country = $1`, ['US']);
await q('amount between', `select count(*) from c where amount between $1 and $2`, [30, 60+k]);
await q('created between', `select count(*) from c where created_at between $1 and $2`, [1740000000, 1760000000+k]);
}
