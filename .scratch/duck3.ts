import { DuckDBInstance } from '@duckdb/node-api';
const inst = await DuckDBInstance.create('/tmp/exp.duckdb', { threads: '1', memory_limit: '128MB' });
const con = await inst.connect();
await con.run(`CREATE OR REPLACE TYPE cart AS ENUM ('clickbank', 'stickyio', 'konnektive', 'buygoods', 'digistore', 'svencart')`).catch(()=>{});
await con.run(`CREATE OR REPLACE TABLE c2 AS SELECT * REPLACE (cart_integration::cart AS cart_integration) FROM c`);
const q = async (label: string, sqlText: string, params: any[] = []) => {
  const s = performance.now();
  const r = await con.runAndReadAll(sqlText, params);
  const rows = r.getRows();
  console.log(label, (performance.now() - s).toFixed(1), 'ms', JSON.stringify(rows.slice(0, 2), (k, v) => typeof v === 'bigint' ? Number(v) : v).slice(0, 100));
};
for (let k = 0; k < 3; k++) {
await q('enum two carts amount', 'select count(*) from c2 where account_id=$1 and cart_integration in ($2,$3) and amount >= $4', [1, 'clickbank', 'buygoods', 40 + k]);
await q('enum two carts only', 'select count(*) from c2 where cart_integration in ($1,$2)', ['clickbank', 'buygoods']);
await q('varchar country', 'select count(*) from c where country in ($1,$2)', ['DE', 'US']);
await q('varchar utm', 'select count(*) from c where utm_source = $1', ['google']);
await q('varchar utm in', 'select count(*) from c where utm_source in ($1, $2)', ['google', 'facebook']);
}
