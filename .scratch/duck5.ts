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
await q('offset 500k', `select id from c where account_id=$1 order by id limit 100 offset $2`, [1, 500000 + k*100]);
await q('offset 500k filtered', `select id from c where account_id=$1 and amount >= $3 order by id limit 100 offset $2`, [1, 300000 + k*100, 30]);
await q('offset 400 filtered', `select id from c where account_id=$1 and list_contains($3, cart_integration) and amount >= $4 order by id limit 100 offset $2`, [1, 400 + k*100, listValue(['clickbank', 'buygoods']), 30+k]);
await q('user_id', `select count(*) from c where account_id=$1 and user_id = $2`, [1, 'u' + (1234 + k)]);
await q('user_id ids', `select id from c where account_id=$1 and user_id = $2 order by id limit 100`, [1, 'u' + (1234 + k)]);
}
