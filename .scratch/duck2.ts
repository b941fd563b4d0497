import { DuckDBInstance } from '@duckdb/node-api';
const inst = await DuckDBInstance.create('/tmp/exp.duckdb', { threads: process.argv[2] ?? '1', memory_limit: '128MB' });
const con = await inst.connect();
const q = async (label: string, sqlText: string, params: any[] = []) => {
  const s = performance.now();
  const r = await con.runAndReadAll(sqlText, params);
  const rows = r.getRows();
  console.log(label, (performance.now() - s).toFixed(1), 'ms', JSON.stringify(rows.slice(0, 2), (k, v) => typeof v === 'bigint' ? Number(v) : v).slice(0, 100));
};
for (let k = 0; k < 3; k++) {
await q('two carts amount', 'select count(*) from c where account_id=$1 and cart_integration in ($2,$3) and amount >= $4', [1, 'clickbank', 'buygoods', 40 + k]);
await q('two carts amount no acct', 'select count(*) from c where cart_integration in ($1,$2) and amount >= $3', ['clickbank', 'buygoods', 40 + k]);
await q('two carts only', 'select count(*) from c where cart_integration in ($1,$2)', ['clickbank', 'buygoods']);
await q('amount only', 'select count(*) from c where amount >= $1', [40+k]);
await q('cart or', 'select count(*) from c where account_id=$1 and (cart_integration = $2 or cart_integration=$3) and amount >= $4', [1, 'clickbank', 'buygoods', 40 + k]);
await q('literal', `select count(*) from c where account_id=1 and cart_integration in ('clickbank','buygoods') and amount >= ${40+k}`);
}
