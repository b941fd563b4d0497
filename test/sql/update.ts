/**
 * `npm run sql:update`: writes the SQL snapshots (snapshots.ts) to test/sql/<engine>/*.sql and
 * removes those no repository makes any more. Review the diff before committing it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SNAPSHOT_DIRS, snapshotFiles } from './snapshots.js';

const root = import.meta.dirname;
const files = await snapshotFiles();
for (const dir of SNAPSHOT_DIRS) {
  fs.mkdirSync(path.join(root, dir), { recursive: true });
  for (const name of fs.readdirSync(path.join(root, dir))) {
    const file = `${dir}/${name}`;
    if (name.endsWith('.sql') && !files.has(file)) {
      fs.rmSync(path.join(root, file));
      console.log(`removed test/sql/${file}`);
    }
  }
}
for (const [file, text] of files) {
  const target = path.join(root, file);
  const before = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : undefined;
  if (before === text) continue;
  fs.writeFileSync(target, text);
  console.log(`${before === undefined ? 'wrote' : 'updated'} test/sql/${file}`);
}
