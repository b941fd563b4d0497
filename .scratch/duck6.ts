import { DuckDBInstance, listValue } from '@duckdb/node-api';
const inst = await DuckDBInstance.create('/tmp/exp.duckdb', { threads: '1', memory_limit: '128MB' });
const con = await inst.connect();
const q = async (label: string, sqlText: string, params: any[] = []) => {
  const s = performance.now();
  const r = await con.runAndReadAll(sqlText, params);
  const rows = r.getRows();
  console.log(label, (performance.now() - s).toFixed(1), 'ms', JSON.stringify(rows.slice(0, 2), (k, v) => typeof v === 'bigint' ? Number(v) : v).slice(0, 150));
};
for (let k = 0; k < 3; k++) {
await q('user_id both', `select count(*), min(id, 100) from c where account_id=$1 and user_id = $2`, [1, 'u' + (1234 + k)]);
await q('carts both p1', `select count(*), min(id, 100) from c where account_id=$1 and list_contains($2, cart_integration) and amount >= $3`, [1, listValue(['clickbank', 'buygoods']), 30+k]);
await q('carts both p5', `select count(*), min(id, 500)[401:] from c where account_id=$1 and list_contains($2, cart_integration) and amount >= $3`, [1, listValue(['clickbank', 'buygoods']), 31+k]);
await q('carts count', `select count(*) from c where account_id=$1 and list_contains($2, cart_integration) and amount >= $3`, [1, listValue(['clickbank', 'buygoods']), 32+k]);
await q('window source both', `select count(*), min(id, 100) from c where account_id=$1 and created_at between $2 and $3 and utm_source=$4`, [1, 1740000000 + k * 1000, 1742600000, 'google']);
}
