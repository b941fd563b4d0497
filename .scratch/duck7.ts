import { DuckDBInstance, listValue } from '@duckdb/node-api';
const inst = await DuckDBInstance.create('/tmp/exp.duckdb', { threads: '1', memory_limit: '128MB' });
const con = await inst.connect();
const q = async (label: string, sqlText: string, params: any[] = []) => {
  const s = performance.now();
  const r = await con.runAndReadAll(sqlText, params);
  const rows = r.getRows();
  console.log(label, (performance.now() - s).toFixed(1), 'ms', JSON.stringify(rows.slice(0, 2), (k, v) => typeof v === 'bigint' ? Number(v) : v).slice(0, 150));
};
let s = performance.now();
await con.run('create index if not exists c_user on c(user_id)');
console.log('index ms', performance.now() - s);
for (let k = 0; k < 3; k++) {
await q('user_id both', `select count(*), min(id, 100) from c where account_id=$1 and user_id = $2`, [1, 'u' + (1234 + k)]);
await q('user_id only', `select count(*), min(id, 100) from c where user_id = $1`, ['u' + (1234 + k)]);
await q('user_id literal', `select count(*), min(id, 100) from c where user_id = 'u${1300+k}'`);
}
console.log((await con.runAndReadAll("explain select count(*), min(id, 100) from c where user_id = 'u1'")).getRows().map(r=>r.join('\n')).join('\n'));
