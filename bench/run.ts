/**
 * `npm run bench`: a benchmark, not a test. It generates realistic conversions and assets into a
 * fresh database, starts the real service pinned to one core, drives it with autocannon from a
 * separate process on another core, compares every scenario with a bare node:http server sending
 * the same bytes, checks a sample of answers against the data, and prints one table next to the
 * targets of issue 5 (and writes it as JSON to bench/results/ for comparing commits). Beside the
 * import's rate it prints the database's own for the same rows with every index (engine-floor.ts).
 *
 *   npm run bench -- [--conversions 1000000] [--assets 2000] [--duration 10] [--warmup 3]
 *                    [--connections 10] [--database postgres://user@host:5432/postgres]
 *
 * Every timed run follows an untimed warm-up of the same family, so that the table shows the
 * steady state rather than the JIT compiler and cold page caches.
 *
 * With --database, a fresh database is created on that server and dropped afterwards.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { seededRandom, syntheticConversions } from '../src/conversions/synthetic.js';
import { openDatabase } from '../src/db/database.js';
import { assetScenario, conversionScenarios, type ConversionFacts, type DataSummary, type Scenario } from './scenarios.js';
import type { LoadOptions, LoadResult } from './load.js';
import { engineFloorSeconds } from './engine-floor.js';
import { freshPostgres, listeningAddress, memoryMiB, stop } from './service.js';
import { uploadFile } from './upload.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const API_KEY = `acds_bench_${'b'.repeat(32)}`;
const SEED = 20260522; // a fixed seed: the same N gives the same data (but for the receipts' run tag)
const CHECKS_PER_SCENARIO = 5;
const MiB = 1024 * 1024;

const TARGETS = {
  sqlite: { requestsPerSecond: 2000, p99Ms: 20, importRowsPerSecond: 50_000 },
  postgres: { requestsPerSecond: 1000, p99Ms: 40, importRowsPerSecond: 25_000 },
  rssMiB: 256,
  uploadGrowthMiB: 64,
};
const UPLOAD_BYTES = 1024 * MiB;

const { values: args } = parseArgs({
  options: {
    conversions: { type: 'string', default: '1000000' },
    assets: { type: 'string', default: '2000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    database: { type: 'string' },
  },
});
const wholeNumber = (name: string, value: string, min: number) => {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new Error(`--${name} must be a whole number of at least ${min}`);
  return Number(value);
};
const options = {
  conversions: wholeNumber('conversions', args.conversions, 1),
  assets: wholeNumber('assets', args.assets, 0),
  durationSeconds: wholeNumber('duration', args.duration, 1),
  warmupSeconds: wholeNumber('warmup', args.warmup, 0),
  connections: wholeNumber('connections', args.connections, 1),
  serverUrl: args.database,
};
const engine = options.serverUrl ? 'postgres' : 'sqlite';
const targets = TARGETS[engine];

const log = (line: string) => console.error(`[bench] ${line}`);
class BenchFailure extends Error {}

// The server (and the bare yardstick) on core 0, the load generator on core 1, where taskset
// exists and there are two cores; otherwise they share the machine and the table says so.
const canPin = os.availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const pinned = (core: number, command: string, commandArgs: string[]): [string, string[]] =>
  canPin ? ['taskset', ['-c', String(core), command, ...commandArgs]] : [command, commandArgs];
// The service runs compiled, as `npm start` runs it; the benchmark's own scripts through tsx.
const node = (core: number, script: string, scriptArgs: string[]) =>
  pinned(core, process.execPath, script.endsWith('.ts') ? ['--import', 'tsx', script, ...scriptArgs] : [script, ...scriptArgs]);
const CLI = 'dist/cli.js';

const children = new Set<ChildProcess>();
function start(core: number, script: string, scriptArgs: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const [command, commandArgs] = node(core, script, scriptArgs);
  const child = spawn(command, commandArgs, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Runs a script to its end; resolves with its standard output, rejects when it fails. */
async function run(core: number, script: string, scriptArgs: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const child = start(core, script, scriptArgs, env);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new BenchFailure(`${script} ${scriptArgs.join(' ')} exited with ${code}:\n${output}`);
  return output;
}

/** Starts a server script and resolves with the URL it prints once it listens. */
async function startServer(script: string, scriptArgs: string[], env?: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = start(0, script, scriptArgs, env);
  return { child, baseUrl: await listeningAddress(child, script).catch((error: Error) => Promise.reject(new BenchFailure(error.message))) };
}

/** Compiles the service into dist/ (npm run build), as `npm start` does. */
function build(): void {
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new BenchFailure(`npm run build failed:\n${built.stdout}${built.stderr}`);
}

/** Samples a process's RSS every 100 ms until stopped; returns the largest sample in MiB. */
function sampleRss(pid: number): () => number | undefined {
  let max: number | undefined;
  const sample = () => {
    const rss = memoryMiB(pid, 'VmRSS');
    if (rss !== undefined) max = Math.max(max ?? 0, rss);
  };
  sample();
  const timer = setInterval(sample, 100);
  return () => {
    clearInterval(timer);
    sample();
    return max;
  };
}

/** Writes N synthetic conversions (the seeder's generator) as NDJSON; returns what the families need. */
function generate(file: string, count: number): DataSummary {
  const buyers: DataSummary['buyers'] = [];
  const every = Math.max(1, Math.floor(count / 1000)); // a sample of about 1,000 buyers, spread over the file
  const fd = fs.openSync(file, 'w');
  let lines: string[] = [];
  let index = 0;
  for (const record of syntheticConversions(count, { random: seededRandom(SEED) })) {
    if (index++ % every === 0) buyers.push({ user_id: String(record.user_id), zip_code: String(record.zip_code) });
    lines.push(JSON.stringify(record));
    if (lines.length === 10_000) {
      fs.writeSync(fd, `${lines.join('\n')}\n`);
      lines = [];
    }
  }
  if (lines.length > 0) fs.writeSync(fd, `${lines.join('\n')}\n`);
  fs.closeSync(fd);
  return { conversions: count, buyers };
}

interface Fetched {
  scenario: Scenario;
  bodies: Map<string, string>;
}

/** Fetches every URL of a family once from the service: the bytes for the bare server, and the answers to check. */
async function fetchFamily(baseUrl: string, scenario: Scenario): Promise<Fetched> {
  const bodies = new Map<string, string>();
  for (const { path: url } of scenario.members) {
    const response = await fetch(baseUrl + url, { headers: { 'x-api-key': API_KEY } });
    const body = await response.text();
    if (response.status !== 200) throw new BenchFailure(`${scenario.id} ${url} answered ${response.status}: ${body}`);
    bodies.set(url, body);
  }
  return { scenario, bodies };
}

interface ListAnswer {
  entries: { id: number; receipt?: string }[];
  totalEntries: number;
  page: number;
  totalPages: number;
}

/**
 * Checks a sample of the fetched answers: conversions against the NDJSON file itself (streamed
 * once; rows were imported in file order, so the file order is the id order), assets against a
 * direct query on the database. Returns the number of answers checked; throws on any mismatch.
 */
async function checkAnswers(fetched: Fetched[], ndjson: string, database: { dataDir: string; databaseUrl: string | undefined }): Promise<number> {
  const random = seededRandom(SEED + 2);
  const problems: string[] = [];
  const probes: { scenario: string; url: string; page: number; answer: ListAnswer; matches: (row: ConversionFacts) => boolean; total: number; receipts: string[] }[] = [];
  const assetProbes: { scenario: string; url: string; page: number; answer: ListAnswer; folder: string }[] = [];
  for (const { scenario, bodies } of fetched) {
    // The first URL of the family and a few at random.
    const sample = new Set([scenario.members[0]!]);
    for (let tries = 0; sample.size < Math.min(CHECKS_PER_SCENARIO, scenario.members.length) && tries < 1000; tries++) {
      sample.add(scenario.members[Math.floor(random() * scenario.members.length)]!);
    }
    for (const { path: url, page, check } of sample) {
      const answer = JSON.parse(bodies.get(url)!) as ListAnswer;
      if (check.kind === 'conversions') probes.push({ scenario: scenario.id, url, page, answer, matches: check.matches, total: 0, receipts: [] });
      else assetProbes.push({ scenario: scenario.id, url, page, answer, folder: check.folder });
    }
  }

  const compare = (scenario: string, url: string, page: number, answer: ListAnswer, total: number, expected: (string | number)[], actual: (string | number | undefined)[]) => {
    const ids = answer.entries.map((entry) => entry.id);
    if (answer.totalEntries !== total) problems.push(`${scenario} ${url}: totalEntries ${answer.totalEntries}, the data has ${total}`);
    if (answer.page !== page || answer.totalPages !== Math.ceil(total / 100)) problems.push(`${scenario} ${url}: page ${answer.page} of ${answer.totalPages}, expected ${page} of ${Math.ceil(total / 100)}`);
    if (JSON.stringify(actual) !== JSON.stringify(expected)) problems.push(`${scenario} ${url}: entries ${JSON.stringify(actual.slice(0, 3))}..., expected ${JSON.stringify(expected.slice(0, 3))}... (${actual.length} vs ${expected.length})`);
    if (ids.some((id, index) => index > 0 && id <= ids[index - 1]!)) problems.push(`${scenario} ${url}: ids not ascending`);
  };

  for await (const line of readline.createInterface({ input: fs.createReadStream(ndjson), crlfDelay: Infinity })) {
    const row = JSON.parse(line) as ConversionFacts;
    for (const probe of probes) {
      if (!probe.matches(row)) continue;
      if (probe.total >= (probe.page - 1) * 100 && probe.total < probe.page * 100) probe.receipts.push(row.receipt);
      probe.total += 1;
    }
  }
  for (const probe of probes) {
    compare(probe.scenario, probe.url, probe.page, probe.answer, probe.total, probe.receipts, probe.answer.entries.map((entry) => entry.receipt));
  }

  const { db, close } = openDatabase({ ...database, poolSize: 1 });
  try {
    const { id: accountId } = await db.selectFrom('accounts').select('id').where('name', '=', 'default').executeTakeFirstOrThrow();
    for (const probe of assetProbes) {
      const matching = db.selectFrom('assets').where('account_id', '=', accountId).where('folder', '=', probe.folder).where('image', '=', 1);
      const { total } = await matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await matching.select('id').orderBy('id').limit(100).offset((probe.page - 1) * 100).execute();
      compare(probe.scenario, probe.url, probe.page, probe.answer, Number(total), rows.map((row) => row.id), probe.answer.entries.map((entry) => entry.id));
    }
  } finally {
    await close();
  }

  if (problems.length > 0) throw new BenchFailure(`WRONG ANSWERS: the service disagrees with the data:\n${problems.join('\n')}`);
  return probes.length + assetProbes.length;
}

/** One autocannon run, in its own process on core 1. */
async function load(baseUrl: string, paths: string[], durationSeconds = options.durationSeconds): Promise<LoadResult> {
  const loadOptions: LoadOptions = {
    baseUrl,
    paths,
    connections: options.connections,
    durationSeconds,
    headers: { 'x-api-key': API_KEY },
  };
  const output = await run(1, 'bench/load.ts', [JSON.stringify(loadOptions)]);
  return JSON.parse(output) as LoadResult;
}

interface Row {
  scenario: string;
  title: string;
  urls: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  bytesPerResponse: number;
  serverRssMiB: number | undefined;
  bareRequestsPerSecond: number;
  ratioToBare: number;
  failedRequests: number;
  met: boolean;
}

const yes = (met: boolean) => (met ? 'met' : 'NOT met');
const fixed = (value: number | undefined, digits = 0) => (value === undefined ? '?' : value.toFixed(digits));

function table(rows: Row[]): string {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'bytes/resp', 'RSS MiB', 'bare req/s', 'ratio', 'failed', `target ≥${targets.requestsPerSecond} req/s, p99 ≤${targets.p99Ms} ms`];
  const lines = rows.map((row) => [
    row.scenario,
    fixed(row.requestsPerSecond, 1),
    fixed(row.p50Ms),
    fixed(row.p99Ms),
    fixed(row.bytesPerResponse),
    fixed(row.serverRssMiB),
    fixed(row.bareRequestsPerSecond),
    row.ratioToBare.toFixed(4),
    String(row.failedRequests),
    yes(row.met),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (cells: string[]) => `| ${cells.map((cell, column) => (column === 0 || column === cells.length - 1 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ')} |`;
  return [format(header), `|${widths.map((width, column) => (column === 0 || column === widths.length - 1 ? '-'.repeat(width + 2) : `${'-'.repeat(width + 1)}:`)).join('|')}|`, ...lines.map(format)].join('\n');
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acds-bench-'));
  const dataDir = path.join(workDir, 'data');
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  let service: { child: ChildProcess; baseUrl: string } | undefined;
  let bare: { child: ChildProcess; baseUrl: string } | undefined;
  try {
    if (options.serverUrl) ({ url: databaseUrl, drop: dropDatabase } = await freshPostgres(options.serverUrl, 'acds_bench'));
    // Exactly this storage, whatever the calling shell has set.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl ?? '',
      REDIS_URL: '',
      ...Object.fromEntries(['S3_BUCKET', 'S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE'].map((name) => [name, ''])),
      LOG_LEVEL: 'warn',
    };
    log(`${engine}, ${options.conversions} conversions, ${options.assets} assets, in ${workDir}${databaseUrl ? ` and ${databaseUrl}` : ''}`);

    const ndjson = path.join(workDir, 'conversions.ndjson');
    let began = performance.now();
    const summary = generate(ndjson, options.conversions);
    log(`generated ${ndjson} (${(fs.statSync(ndjson).size / MiB).toFixed(0)} MiB) in ${((performance.now() - began) / 1000).toFixed(1)} s`);

    build();
    // The schema first, so that the timed import is the import alone (plus the process start).
    await run(0, CLI, ['migrate'], env);
    began = performance.now();
    const imported = await run(0, CLI, ['conversions', 'import', ndjson], env);
    const importSeconds = (performance.now() - began) / 1000;
    if (!imported.includes(`imported ${options.conversions} conversions`)) throw new BenchFailure(`the import did not import every row: ${imported}`);
    const importRowsPerSecond = options.conversions / importSeconds;
    log(`imported ${options.conversions} rows in ${importSeconds.toFixed(1)} s: ${importRowsPerSecond.toFixed(0)} rows/s`);

    if (options.assets > 0) {
      await run(0, CLI, ['seed', '--conversions', '0', '--assets', String(options.assets)], env);
      log(`seeded ${options.assets} assets`);
    }

    service = await startServer(CLI, ['serve'], {
      ...env,
      PORT: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      BOOTSTRAP_API_KEY: API_KEY,
      MAX_UPLOAD_BYTES: String(UPLOAD_BYTES),
    });
    const servicePid = service.child.pid!;
    log(`service ${service.baseUrl} (pid ${servicePid})${canPin ? ', pinned to core 0' : ''}`);

    // The asset folders come from the database, so that S6 lists every folder the seeder made.
    const folders = await (async () => {
      const { db, close } = openDatabase({ dataDir, databaseUrl, poolSize: 1 });
      try {
        return await db
          .selectFrom('assets')
          .select((eb) => ['folder', eb.fn.sum<number>('image').as('images')])
          .groupBy('folder')
          .orderBy('folder')
          .execute();
      } finally {
        await close();
      }
    })();
    const scenarios = [...conversionScenarios(summary, seededRandom(SEED + 1)), ...(folders.length > 0 ? [assetScenario(folders.map(({ folder, images }) => ({ folder, images: Number(images) })))] : [])];

    const fetched: Fetched[] = [];
    for (const scenario of scenarios) {
      began = performance.now();
      fetched.push(await fetchFamily(service.baseUrl, scenario));
      log(`${scenario.id}: fetched its ${scenario.members.length} URLs once in ${((performance.now() - began) / 1000).toFixed(1)} s (e.g. ${scenario.members[0]!.path})`);
    }
    const checked = await checkAnswers(fetched, ndjson, { dataDir, databaseUrl });
    log(`checked ${checked} answers against the data: all right`);

    const bodiesFile = path.join(workDir, 'bodies.json');
    fs.writeFileSync(bodiesFile, JSON.stringify(Object.fromEntries(fetched.flatMap(({ bodies }) => [...bodies]))));
    bare = await startServer('bench/bare-server.ts', [bodiesFile]);

    const rows: Row[] = [];
    for (const { scenario, bodies } of fetched) {
      const paths = scenario.members.map((member) => member.path);
      log(`${scenario.id}: ${options.warmupSeconds} + ${options.durationSeconds} s against the service, then against the bare server...`);
      const stopSampling = sampleRss(servicePid);
      if (options.warmupSeconds > 0) await load(service.baseUrl, paths, options.warmupSeconds);
      const measured = await load(service.baseUrl, paths);
      const serverRssMiB = stopSampling();
      if (options.warmupSeconds > 0) await load(bare.baseUrl, paths, options.warmupSeconds);
      const yardstick = await load(bare.baseUrl, paths);
      const failedRequests = measured.non2xx + measured.errors + measured.timeouts;
      if (measured.non2xx > 0 || yardstick.non2xx > 0) throw new BenchFailure(`${scenario.id}: non-2xx answers under load (${measured.non2xx} from the service, ${yardstick.non2xx} from the bare server)`);
      rows.push({
        scenario: scenario.id,
        title: scenario.title,
        urls: paths.length,
        requestsPerSecond: measured.requestsPerSecond,
        p50Ms: measured.p50Ms,
        p99Ms: measured.p99Ms,
        bytesPerResponse: [...bodies.values()].reduce((sum, body) => sum + Buffer.byteLength(body), 0) / bodies.size,
        serverRssMiB,
        bareRequestsPerSecond: yardstick.requestsPerSecond,
        ratioToBare: measured.requestsPerSecond / yardstick.requestsPerSecond,
        failedRequests,
        met: measured.requestsPerSecond >= targets.requestsPerSecond && measured.p99Ms <= targets.p99Ms && failedRequests === 0,
      });
    }

    // Last, so that the peak below covers it too: the growth of the server's memory while it takes 1 GiB.
    const restingRssMiB = memoryMiB(servicePid, 'VmRSS');
    const stopUploadSampling = sampleRss(servicePid);
    began = performance.now();
    const uploaded = await uploadFile(service.baseUrl, API_KEY, 'one-gibibyte.bin', UPLOAD_BYTES);
    const uploadSeconds = (performance.now() - began) / 1000;
    const uploadPeakMiB = stopUploadSampling();
    if (uploaded.status !== 200) throw new BenchFailure(`the 1 GiB upload answered ${uploaded.status}: ${uploaded.body}`);
    const uploadGrowthMiB = uploadPeakMiB !== undefined && restingRssMiB !== undefined ? uploadPeakMiB - restingRssMiB : undefined;
    log(`uploaded 1 GiB in ${uploadSeconds.toFixed(1)} s; server RSS ${fixed(restingRssMiB)} MiB before, ${fixed(uploadPeakMiB)} MiB at most during it`);

    const peakRssMiB = memoryMiB(servicePid, 'VmHWM');
    // Last, once nothing timed shares the machine with it (and the server's peak is read).
    log('copying the conversions into a copy of their table with every index, in the database alone...');
    const floorDatabase = openDatabase({ dataDir, databaseUrl, poolSize: 1 });
    const floorSeconds = await engineFloorSeconds(floorDatabase).finally(() => floorDatabase.close());
    const floorRowsPerSecond = options.conversions / floorSeconds;
    const importMet = importRowsPerSecond >= targets.importRowsPerSecond;
    const memoryMet = peakRssMiB !== undefined && peakRssMiB <= TARGETS.rssMiB;
    const uploadMet = uploadGrowthMiB !== undefined && uploadGrowthMiB <= TARGETS.uploadGrowthMiB;
    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();

    console.log(`\nacds benchmark: ${engine}, ${options.conversions} conversions, ${options.assets} assets; ${options.connections} connections, ${options.durationSeconds} s per run after ${options.warmupSeconds} s of warm-up`);
    console.log(`commit ${commit || '?'}, Node ${process.version}, ${os.cpus().length} x ${cpu}; ${canPin ? 'server on core 0, autocannon on core 1' : 'NOT pinned (no taskset or one core)'}\n`);
    console.log(table(rows));
    console.log('');
    for (const row of rows) console.log(`${row.scenario}: ${row.title} (${row.urls} URLs)`);
    console.log('');
    console.log(`import: ${options.conversions} rows in ${importSeconds.toFixed(1)} s = ${importRowsPerSecond.toFixed(0)} rows/s (target ≥${targets.importRowsPerSecond}): ${yes(importMet)}`);
    console.log(`  the database alone, copying those rows into a copy of their table with every index: ${floorSeconds.toFixed(1)} s = ${floorRowsPerSecond.toFixed(0)} rows/s, the most any import can reach here`);
    console.log(`memory: server peak RSS ${fixed(peakRssMiB)} MiB over the whole run (target ≤${TARGETS.rssMiB} MiB): ${yes(memoryMet)}`);
    console.log(`upload: 1 GiB in ${uploadSeconds.toFixed(1)} s, server RSS grew ${fixed(uploadGrowthMiB)} MiB (target ≤${TARGETS.uploadGrowthMiB} MiB): ${yes(uploadMet)}`);
    console.log(`answers: ${checked} checked against the data, all right`);
    const allMet = rows.every((row) => row.met) && importMet && memoryMet && uploadMet;
    console.log(`targets: ${allMet ? 'ALL met' : `NOT all met (${rows.filter((row) => !row.met).length} of ${rows.length} scenarios miss)`}`);

    const resultsDir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const resultsFile = path.join(resultsDir, `${startedAt.toISOString().replace(/[:.]/g, '-')}-${engine}.json`);
    const report = {
      engine,
      startedAt: startedAt.toISOString(),
      commit,
      machine: { cpu, cpus: os.cpus().length, memoryGiB: os.totalmem() / 1024 ** 3, node: process.version, pinned: canPin },
      options: { conversions: options.conversions, assets: options.assets, durationSeconds: options.durationSeconds, warmupSeconds: options.warmupSeconds, connections: options.connections },
      targets: { ...targets, rssMiB: TARGETS.rssMiB, uploadGrowthMiB: TARGETS.uploadGrowthMiB },
      import: { rows: options.conversions, seconds: importSeconds, rowsPerSecond: importRowsPerSecond, met: importMet },
      engineFloor: { seconds: floorSeconds, rowsPerSecond: floorRowsPerSecond },
      scenarios: rows,
      memory: { peakRssMiB, met: memoryMet },
      upload: { bytes: UPLOAD_BYTES, seconds: uploadSeconds, restingRssMiB, peakRssMiB: uploadPeakMiB, growthMiB: uploadGrowthMiB, met: uploadMet },
      answersChecked: checked,
      allMet,
    };
    fs.writeFileSync(resultsFile, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`written to ${path.relative(ROOT, resultsFile)}`);
    return 0;
  } finally {
    for (const server of [bare, service]) if (server) await stop(server.child);
    await dropDatabase().catch((error: Error) => log(`could not drop the database: ${error.message}`));
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

// Ctrl-C: stop what this run started (the finally above does not run on a signal).
process.once('SIGINT', () => {
  for (const child of children) child.kill('SIGKILL');
  process.exit(130);
});

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(`\n[bench] FAILED: ${error instanceof Error ? (error instanceof BenchFailure ? error.message : error.stack) : String(error)}`);
    process.exitCode = 1;
  },
);
