/**
 * `npm run bench`: a benchmark, not a test. It generates realistic conversions and assets,
 * starts the real service pinned to one core on a fresh (empty) database, imports the
 * conversions with the command line while the service runs (and times how soon the service
 * answers for every row after the import, while another account, with a few rows of its own
 * arriving, asks new questions), drives the service with autocannon from a separate
 * process on another core, compares every scenario with a bare node:http server sending the same
 * bytes, checks a sample of answers against the data, then asks new questions once each (cold,
 * bench/cold.ts) beside a probe, then times reports and the export (reports.ts) and the web
 * console in Chromium (console.ts). It prints tables next to its TARGETS (and writes them
 * as JSON to bench/results/ for comparing commits). Beside the import's rate it prints the
 * database's own for the same rows with every index (engine-floor.ts).
 *
 *   npm run bench -- [--conversions 1000000] [--assets 2000] [--duration 10] [--warmup 3]
 *                    [--connections 10] [--cold-questions 60] [--baseline <git ref>]
 *                    [--database postgres://user@host:5432/postgres] [--service-log FILE]
 *
 * Every timed warm run follows an untimed warm-up of the same family, so that the table shows the
 * steady state rather than the JIT compiler and cold page caches. The cold questions are the
 * opposite: each is new, asked once, and checked against the data.
 *
 * With --baseline, that commit is built in a temporary git worktree (sharing this checkout's
 * node_modules) and the same warm scenarios, the same URLs for the same time, run against it on
 * storage of its own, with its own import of the same file: its req/s and p99 stand beside this
 * code's in the table.
 *
 * With --database, a fresh database is created on that server for each code and dropped afterwards.
 *
 * With --service-log, the service logs at info (its index's catch-ups and rewrites among it) to
 * FILE, and the baseline's to FILE.baseline: for finding why a figure moved, not for the figures,
 * since it then logs every request too, which costs it time.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { seededRandom } from '../src/conversions/synthetic.js';
import { openDatabase } from '../src/db/database.js';
import { SERVICE_NODE_FLAGS } from '../src/cli/node-flags.js';
import { checkConversionAnswers, compareAnswer, type ListAnswer } from './answers.js';
import { coldFamilies, PROBE_EVERY_MS, type ColdReport } from './cold.js';
import { CHROMIUM_PATH } from '../test/helpers/chromium.js';
import { measureConsole } from './console.js';
import { describeMainThread, watchMainThread } from './main-thread.js';
import { measureReports } from './reports.js';
import { engineFloorSeconds } from './engine-floor.js';
import type { LoadOptions, LoadResult } from './load.js';
import { assetScenario, conversionScenarios, type ConversionFacts, type DataSummary, type Scenario } from './scenarios.js';
import {
  BenchFailure,
  build,
  canPin,
  children,
  CLIENT_NODE_FLAGS,
  freshPostgres,
  latencies,
  type Latencies,
  listeningAddress,
  memoryMiB,
  processMemoryMiB,
  runPinned,
  startPinned,
  stop,
  writeConversions,
} from './service.js';
import { uploadFile } from './upload.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const API_KEY = `acds_bench_${'b'.repeat(32)}`;
const SEED = 20260522; // a fixed seed: the same N gives the same data (but for the receipts' run tag)
const CHECKS_PER_SCENARIO = 5;
const MiB = 1024 * 1024;
// How often the service is asked, after the import, whether it answers for every row.
const CATCH_UP_POLL_MS = 50;
const CATCH_UP_GIVE_UP_MS = 10 * 60 * 1000;
// Another account's conversions, imported before the large import, asked about while the service catches up with it;
// and more of them, imported as the large import ends.
const OTHER_ACCOUNT_ROWS = 1_000;
const OTHER_ACCOUNT_NEW_ROWS = 10;
// How long the index is given to take another account's rows in unasked (it looks for new rows every second).
const OTHER_ACCOUNT_INDEXED_MS = 3_000;

const TARGETS = {
  sqlite: {
    requestsPerSecond: 2000,
    p99Ms: 20,
    importRowsPerSecond: 50_000,
    cold: { p50Ms: 15, p90Ms: 40, maxMs: 100 },
    probeP99Ms: 20,
    reports: { quarterP50Ms: 30, everythingMaxMs: 100, exportRowsPerSecond: 150_000 },
  },
  // Reports and export: within three times the embedded default's.
  postgres: {
    requestsPerSecond: 1000,
    p99Ms: 40,
    importRowsPerSecond: 25_000,
    cold: { p50Ms: 50, p90Ms: 120, maxMs: 250 },
    probeP99Ms: 30,
    reports: { quarterP50Ms: 90, everythingMaxMs: 300, exportRowsPerSecond: 50_000 },
  },
  exportGrowthMiB: 32,
  consoleFirstPageMs: 1000,
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
    'cold-questions': { type: 'string', default: '60' },
    baseline: { type: 'string' },
    database: { type: 'string' },
    'service-log': { type: 'string' },
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
  coldQuestions: wholeNumber('cold-questions', args['cold-questions'], 1),
  baseline: args.baseline,
  serverUrl: args.database,
  serviceLog: args['service-log'] === undefined ? undefined : path.resolve(args['service-log']),
};
const engine = options.serverUrl ? 'postgres' : 'sqlite';
const targets = TARGETS[engine];

const log = (line: string) => console.error(`[bench] ${line}`);

// The service runs compiled, as `npm start` runs it; the benchmark's own scripts through tsx.
// The server (and the bare yardstick) on core 0, the load generator and the command line's
// import on core 1 (service.ts: canPin), so that the service catching up does not share a core
// with the import it catches up with.
const CLI = 'dist/cli.js';

/** Starts a server script on core 0 and resolves with the URL it prints once it listens. */
async function startServer(cwd: string, script: string, scriptArgs: string[], env?: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = startPinned(0, script, scriptArgs, { cwd, env, nodeFlags: script === CLI ? SERVICE_NODE_FLAGS : [] });
  return { child, baseUrl: await listeningAddress(child, script).catch((error: Error) => Promise.reject(new BenchFailure(error.message))) };
}

function git(gitArgs: string[]): string {
  const result = spawnSync('git', gitArgs, { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new BenchFailure(`git ${gitArgs.join(' ')} failed:\n${result.stderr}`);
  return result.stdout.trim();
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
  writeConversions(file, count, SEED, (record, index) => {
    if (index % every === 0) buyers.push({ user_id: String(record.user_id), zip_code: String(record.zip_code) });
  });
  return { conversions: count, buyers };
}

interface Storage {
  dataDir: string;
  databaseUrl: string | undefined;
}

/** One build of the service (this checkout's, or the baseline's worktree) running on storage of its own. */
interface Stack {
  name: string;
  storage: Storage;
  service: { child: ChildProcess; baseUrl: string };
  import: { seconds: number; rowsPerSecond: number };
  /** From the import's end until a new question first counted every row imported. */
  caughtUp: { ms: number; polls: number };
  /**
   * Another account's new questions meanwhile, every CATCH_UP_POLL_MS: how long each took, how
   * many were refused (503), and how many counted its rows imported as the large import ended.
   */
  otherAccount: Latencies & { refused: number; withNewRows: number };
}

/**
 * Asks, every CATCH_UP_POLL_MS from `since` (the import's end), a question never asked before
 * (amount.lt a new bound above every amount) until its total is every row imported.
 */
async function untilEveryRowAnswered(baseUrl: string, since: number): Promise<{ ms: number; polls: number }> {
  for (let polls = 1; ; polls++) {
    const began = performance.now();
    const url = `${baseUrl}/api/v1/conversions?amount.lt=${100_000 + polls}`;
    const response = await fetch(url, { headers: { 'x-api-key': API_KEY } });
    const body = await response.text();
    const ms = performance.now() - since;
    // A 503 says the index is still catching up (it did not answer within the service's time limit).
    const catchingUp = response.status === 503 && ms <= CATCH_UP_GIVE_UP_MS;
    if (response.status !== 200 && !catchingUp) throw new BenchFailure(`${url} answered ${response.status} after the import: ${body}`);
    const totalEntries = catchingUp ? 0 : (JSON.parse(body) as ListAnswer).totalEntries;
    if (totalEntries === options.conversions) return { ms, polls };
    if (totalEntries > options.conversions || ms > CATCH_UP_GIVE_UP_MS) {
      throw new BenchFailure(`${url} answered totalEntries ${totalEntries} ${(ms / 1000).toFixed(1)} s after importing ${options.conversions} rows`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, CATCH_UP_POLL_MS - (performance.now() - began))));
  }
}

/**
 * Starts the service of `codeDir` (built) on fresh, migrated, empty storage, imports the
 * conversions with its command line while it runs (timed), waits until it answers for every row,
 * then seeds the assets. `cleanups` gets what undoes it (stopping the service, dropping the database).
 */
async function startStack(name: string, codeDir: string, ndjson: string, workDir: string, cleanups: (() => Promise<void>)[]): Promise<Stack> {
  const dataDir = path.join(workDir, `${name}-data`);
  let databaseUrl: string | undefined;
  if (options.serverUrl) {
    const fresh = await freshPostgres(options.serverUrl, 'acds_bench');
    databaseUrl = fresh.url;
    cleanups.push(() => fresh.drop().catch((error: Error) => log(`could not drop the database ${fresh.url}: ${error.message}`)));
  }
  // Exactly this storage, whatever the calling shell has set.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl ?? '',
    REDIS_URL: '',
    ...Object.fromEntries(
      ['S3_BUCKET', 'S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE'].map((variable) => [variable, '']),
    ),
    LOG_LEVEL: options.serviceLog ? 'info' : 'warn',
  };
  const cli = (core: number, cliArgs: string[]) => runPinned(core, CLI, cliArgs, { cwd: codeDir, env });
  log(`${name}: ${codeDir}, data in ${dataDir}${databaseUrl ? ` and ${databaseUrl}` : ''}`);

  await cli(0, ['migrate']);
  const service = await startServer(codeDir, CLI, ['serve'], {
    ...env,
    PORT: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    PUBLIC_RATE_LIMIT_PER_MINUTE: '0', // the probe asks for a public asset 20 times a second
    BOOTSTRAP_API_KEY: API_KEY,
    MAX_UPLOAD_BYTES: String(UPLOAD_BYTES),
  });
  cleanups.push(() => stop(service.child));
  if (options.serviceLog) service.child.stdout!.pipe(fs.createWriteStream(name === 'current' ? options.serviceLog : `${options.serviceLog}.${name}`));
  log(`${name}: service ${service.baseUrl} (pid ${service.child.pid})${canPin ? ', pinned to core 0' : ''}, on an empty database`);

  const otherKey = (await cli(1, ['keys', 'create', '--account', 'other'])).trim().split('\n').at(-1)!;
  await cli(1, ['seed', '--conversions', String(OTHER_ACCOUNT_ROWS), '--assets', '0', '--account', 'other']);
  // Not asked about before the import: its first question comes during the catch-up, as an account's first after a start does.
  await new Promise((resolve) => setTimeout(resolve, OTHER_ACCOUNT_INDEXED_MS));

  const began = performance.now();
  const imported = await cli(1, ['conversions', 'import', ndjson]);
  const importEnded = performance.now();
  const seconds = (importEnded - began) / 1000;
  if (!imported.includes(`imported ${options.conversions} conversions`)) throw new BenchFailure(`${name}: the import did not import every row: ${imported}`);
  const rowsPerSecond = options.conversions / seconds;
  log(`${name}: imported ${options.conversions} rows in ${seconds.toFixed(1)} s: ${rowsPerSecond.toFixed(0)} rows/s`);
  const othersAsking = new AbortController();
  const otherAccountAsking = askAsAnotherAccount(service.baseUrl, otherKey, othersAsking.signal);
  const otherNewRows = path.join(workDir, `${name}-other-new.ndjson`);
  writeConversions(otherNewRows, OTHER_ACCOUNT_NEW_ROWS, SEED + 1);
  const otherImport = cli(1, ['conversions', 'import', otherNewRows, '--account', 'other']);
  const caughtUp = await untilEveryRowAnswered(service.baseUrl, importEnded).finally(() => othersAsking.abort());
  await otherImport;
  const otherAccount = await otherAccountAsking;
  log(`${name}: every row answered ${caughtUp.ms.toFixed(0)} ms after the import (question ${caughtUp.polls})`);

  if (options.assets > 0) {
    await cli(1, ['seed', '--conversions', '0', '--assets', String(options.assets)]);
    log(`${name}: seeded ${options.assets} assets`);
  }
  return { name, storage: { dataDir, databaseUrl }, service, import: { seconds, rowsPerSecond }, caughtUp, otherAccount };
}

/**
 * Asks, every CATCH_UP_POLL_MS until `stop`, a new question of another account (every tenth an
 * export), whose rows the index took in before the import, unasked, and whose
 * OTHER_ACCOUNT_NEW_ROWS more are imported meanwhile: each answer must hold every row of the
 * first, and the new ones once any answer has.
 */
async function askAsAnotherAccount(baseUrl: string, apiKey: string, stop: AbortSignal): Promise<Stack['otherAccount']> {
  const took: number[] = [];
  let refused = 0;
  let withNewRows = 0;
  for (let asked = 1; !stop.aborted; asked++) {
    const began = performance.now();
    // Every tenth, its matching rows exported.
    const exporting = asked % 10 === 0;
    const url = `${baseUrl}/api/v1/conversions${exporting ? '/export?format=ndjson&' : '?'}amount.lt=${200_000 + asked}`;
    const response = await fetch(url, { headers: { 'x-api-key': apiKey } });
    const body = await response.text();
    took.push(performance.now() - began);
    const lines = () => body.split('\n').filter((line) => line !== '').length;
    const total = response.status !== 200 ? undefined : exporting ? lines() : (JSON.parse(body) as ListAnswer).totalEntries;
    if (response.status === 503) refused++;
    else if (total === OTHER_ACCOUNT_ROWS + OTHER_ACCOUNT_NEW_ROWS) withNewRows++;
    else if (total !== OTHER_ACCOUNT_ROWS || withNewRows > 0) {
      throw new BenchFailure(`${url}, another account's question during the catch-up, answered ${response.status}: ${body.slice(0, 200)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, CATCH_UP_POLL_MS - (performance.now() - began))));
  }
  return { ...latencies(took), refused, withNewRows };
}

/** Builds `ref` in a git worktree of its own in `workDir`, this checkout's node_modules linked in. */
function prepareBaseline(ref: string, workDir: string, cleanups: (() => Promise<void>)[]): { dir: string; commit: string } {
  const commit = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  const dir = path.join(workDir, 'baseline');
  git(['worktree', 'add', '--detach', dir, commit]);
  const modules = path.join(dir, 'node_modules');
  const remove = () => {
    // The link first, so that nothing removing the worktree can reach this checkout's node_modules.
    fs.rmSync(modules, { force: true });
    spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT });
  };
  removeWorktree = remove;
  cleanups.push(async () => {
    remove();
    removeWorktree = undefined;
  });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), modules, 'dir');
  log(`baseline ${ref} (${commit.slice(0, 7)}): building in ${dir}...`);
  build(dir);
  return { dir, commit };
}
let removeWorktree: (() => void) | undefined;

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

/**
 * Checks a sample of the fetched answers: conversions against the NDJSON file itself,
 * assets against a direct query on the database. Returns the number of answers checked and the
 * problems found.
 */
async function checkAnswers(fetched: Fetched[], ndjson: string, storage: Storage): Promise<{ checked: number; problems: string[] }> {
  const random = seededRandom(SEED + 2);
  const probes: { label: string; page: number; answer: ListAnswer; matches: (row: ConversionFacts) => boolean }[] = [];
  const assetProbes: { label: string; page: number; answer: ListAnswer; folder: string }[] = [];
  for (const { scenario, bodies } of fetched) {
    // The first URL of the family and a few at random.
    const sample = new Set([scenario.members[0]!]);
    for (let tries = 0; sample.size < Math.min(CHECKS_PER_SCENARIO, scenario.members.length) && tries < 1000; tries++) {
      sample.add(scenario.members[Math.floor(random() * scenario.members.length)]!);
    }
    for (const { path: url, page, check } of sample) {
      const answer = JSON.parse(bodies.get(url)!) as ListAnswer;
      const label = `${scenario.id} ${url}`;
      if (check.kind === 'conversions') probes.push({ label, page, answer, matches: check.matches });
      else assetProbes.push({ label, page, answer, folder: check.folder });
    }
  }

  const problems = await checkConversionAnswers(probes, ndjson);
  const { db, close } = openDatabase({ ...storage, poolSize: 1 });
  try {
    const { id: accountId } = await db.selectFrom('accounts').select('id').where('name', '=', 'default').executeTakeFirstOrThrow();
    for (const probe of assetProbes) {
      const matching = db.selectFrom('assets').where('account_id', '=', accountId).where('folder', '=', probe.folder).where('image', '=', 1);
      const { total } = await matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await matching
        .select('id')
        .orderBy('id')
        .limit(100)
        .offset((probe.page - 1) * 100)
        .execute();
      problems.push(
        ...compareAnswer(
          probe.label,
          probe.page,
          probe.answer,
          Number(total),
          rows.map((row) => row.id),
          probe.answer.entries.map((entry) => entry.id),
        ),
      );
    }
  } finally {
    await close();
  }
  return { checked: probes.length + assetProbes.length, problems };
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
  const output = await runPinned(1, 'bench/load.ts', [JSON.stringify(loadOptions)], { cwd: ROOT, nodeFlags: CLIENT_NODE_FLAGS });
  return JSON.parse(output) as LoadResult;
}

/** Warm-up, then the timed run of a family against a service, its RSS sampled meanwhile. */
async function measure(label: string, service: Stack['service'], paths: string[]): Promise<LoadResult & { serverRssMiB: number | undefined }> {
  const stopSampling = sampleRss(service.child.pid!);
  if (options.warmupSeconds > 0) await load(service.baseUrl, paths, options.warmupSeconds);
  const measured = await load(service.baseUrl, paths);
  const serverRssMiB = stopSampling();
  if (measured.non2xx > 0) throw new BenchFailure(`${label}: ${measured.non2xx} non-2xx answers under load`);
  return { ...measured, serverRssMiB };
}

interface BaselineRow {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  serverRssMiB: number | undefined;
  failedRequests: number;
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
  baseline?: BaselineRow;
}

const yes = (met: boolean) => (met ? 'met' : 'NOT met');
const fixed = (value: number | undefined, digits = 0) => (value === undefined || Number.isNaN(value) ? '?' : value.toFixed(digits));
const describeOtherAccount = ({ n, p50Ms, p99Ms, maxMs, refused, withNewRows }: Stack['otherAccount']) =>
  `${n} asked, p50 / p99 / max ${fixed(p50Ms, 1)} / ${fixed(p99Ms, 1)} / ${fixed(maxMs, 1)} ms, ${refused} answered 503, ${withNewRows} counted its ${OTHER_ACCOUNT_NEW_ROWS} rows imported meanwhile`;

/** A Markdown table: the first and last columns are text, the others numbers. */
function table(header: string[], lines: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const text = (column: number) => column === 0 || column === header.length - 1;
  const format = (cells: string[]) =>
    `| ${cells.map((cell, column) => (text(column) ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ')} |`;
  return [
    format(header),
    `|${widths.map((width, column) => (text(column) ? '-'.repeat(width + 2) : `${'-'.repeat(width + 1)}:`)).join('|')}|`,
    ...lines.map(format),
  ].join('\n');
}

function warmTable(rows: Row[], baselineName: string | undefined): string {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'bytes/resp', 'RSS MiB', 'bare req/s', 'ratio', 'failed'];
  if (baselineName) header.push(`${baselineName} req/s`, `${baselineName} p99 ms`, 'req/s vs base');
  header.push(`target ≥${targets.requestsPerSecond} req/s, p99 ≤${targets.p99Ms} ms`);
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
    ...(baselineName
      ? [
          fixed(row.baseline?.requestsPerSecond, 1),
          fixed(row.baseline?.p99Ms),
          row.baseline ? `${((row.requestsPerSecond / row.baseline.requestsPerSecond - 1) * 100).toFixed(0)}%` : '?',
        ]
      : []),
    yes(row.met),
  ]);
  return table(header, lines);
}

type ColdFamilyRow = ColdReport['families'][number] & { met: boolean };

function coldTable(families: ColdFamilyRow[], probe: ColdReport['probe'] & { met: boolean }): string {
  const { cold } = targets;
  const header = ['cold, each question new and asked once', 'asked', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'target'];
  const lines = [
    ...families.map((row) => [
      row.family,
      String(row.n),
      fixed(row.p50Ms, 1),
      fixed(row.p90Ms, 1),
      fixed(row.p99Ms, 1),
      fixed(row.maxMs, 1),
      `p50 ≤${cold.p50Ms}, p90 ≤${cold.p90Ms}, max ≤${cold.maxMs} ms: ${yes(row.met)}`,
    ]),
    [
      `probe every ${PROBE_EVERY_MS} ms: a buyer's conversions${probe.asset ? ' + a public asset' : ''}`,
      String(probe.n),
      fixed(probe.p50Ms, 1),
      fixed(probe.p90Ms, 1),
      fixed(probe.p99Ms, 1),
      fixed(probe.maxMs, 1),
      `p99 ≤${targets.probeP99Ms} ms: ${yes(probe.met)}`,
    ],
  ];
  return table(header, lines);
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acds-bench-'));
  // Undone in reverse order at the end, whatever happens.
  const cleanups: (() => Promise<void>)[] = [];
  try {
    log(`${engine}, ${options.conversions} conversions, ${options.assets} assets, in ${workDir}`);
    const ndjson = path.join(workDir, 'conversions.ndjson');
    let began = performance.now();
    const summary = generate(ndjson, options.conversions);
    log(`generated ${ndjson} (${(fs.statSync(ndjson).size / MiB).toFixed(0)} MiB) in ${((performance.now() - began) / 1000).toFixed(1)} s`);

    build(ROOT);
    // Built now, so that a ref that does not build fails the run before the long part.
    const baseline = options.baseline ? prepareBaseline(options.baseline, workDir, cleanups) : undefined;

    const current = await startStack('current', ROOT, ndjson, workDir, cleanups);
    const { service } = current;
    const servicePid = service.child.pid!;

    // The asset folders come from the database, so that S6 lists every folder the seeder made.
    const folders = await (async () => {
      const { db, close } = openDatabase({ ...current.storage, poolSize: 1 });
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
    const scenarios = [
      ...conversionScenarios(summary, seededRandom(SEED + 1)),
      ...(folders.length > 0 ? [assetScenario(folders.map(({ folder, images }) => ({ folder, images: Number(images) })))] : []),
    ];

    const fetched: Fetched[] = [];
    for (const scenario of scenarios) {
      began = performance.now();
      fetched.push(await fetchFamily(service.baseUrl, scenario));
      log(
        `${scenario.id}: fetched its ${scenario.members.length} URLs once in ${((performance.now() - began) / 1000).toFixed(1)} s (e.g. ${scenario.members[0]!.path})`,
      );
    }
    const { checked, problems } = await checkAnswers(fetched, ndjson, current.storage);
    if (problems.length > 0) throw new BenchFailure(`WRONG ANSWERS: the service disagrees with the data:\n${problems.join('\n')}`);
    log(`checked ${checked} answers against the data: all right`);

    const bodiesFile = path.join(workDir, 'bodies.json');
    fs.writeFileSync(bodiesFile, JSON.stringify(Object.fromEntries(fetched.flatMap(({ bodies }) => [...bodies]))));
    const bare = await startServer(ROOT, 'bench/bare-server.ts', [bodiesFile]);
    cleanups.push(() => stop(bare.child));

    const rows: Row[] = [];
    for (const { scenario, bodies } of fetched) {
      const paths = scenario.members.map((member) => member.path);
      log(`${scenario.id}: ${options.warmupSeconds} + ${options.durationSeconds} s against the service, then against the bare server...`);
      const measured = await measure(scenario.id, service, paths);
      if (options.warmupSeconds > 0) await load(bare.baseUrl, paths, options.warmupSeconds);
      const yardstick = await load(bare.baseUrl, paths);
      if (yardstick.non2xx > 0) throw new BenchFailure(`${scenario.id}: ${yardstick.non2xx} non-2xx answers from the bare server`);
      const failedRequests = measured.non2xx + measured.errors + measured.timeouts;
      rows.push({
        scenario: scenario.id,
        title: scenario.title,
        urls: paths.length,
        requestsPerSecond: measured.requestsPerSecond,
        p50Ms: measured.p50Ms,
        p99Ms: measured.p99Ms,
        bytesPerResponse: [...bodies.values()].reduce((sum, body) => sum + Buffer.byteLength(body), 0) / bodies.size,
        serverRssMiB: measured.serverRssMiB,
        bareRequestsPerSecond: yardstick.requestsPerSecond,
        ratioToBare: measured.requestsPerSecond / yardstick.requestsPerSecond,
        failedRequests,
        met: measured.requestsPerSecond >= targets.requestsPerSecond && measured.p99Ms <= targets.p99Ms && failedRequests === 0,
      });
    }
    await stop(bare.child);

    // The cold questions, each new, beside the probe (a buyer's conversions and a public asset).
    const assetUrl = await (async () => {
      if (options.assets === 0) return undefined;
      const response = await fetch(`${service.baseUrl}/api/v1/assets`, { headers: { 'x-api-key': API_KEY } });
      const { entries } = (await response.json()) as { entries: { public_url: string | null }[] };
      return entries.find((entry) => entry.public_url)?.public_url ?? undefined;
    })();
    log(
      `cold: ${options.coldQuestions} new questions of each family, one at a time, beside a probe every ${PROBE_EVERY_MS} ms${assetUrl ? '' : ' (no public asset to probe)'}...`,
    );
    const stopColdSampling = sampleRss(servicePid);
    const coldMainThread = await watchMainThread(service.baseUrl);
    const cold = await coldFamilies({
      baseUrl: service.baseUrl,
      apiKey: API_KEY,
      summary,
      assetUrl,
      ndjson,
      count: options.coldQuestions,
      seed: SEED + 3,
      workDir,
    });
    const coldRssMiB = stopColdSampling();
    const mainThread = await coldMainThread();
    log(`cold: ${cold.answersChecked} answers checked against the data: all right`);
    const coldFamilyRows: ColdFamilyRow[] = cold.families.map((family) => ({
      ...family,
      met: family.p50Ms <= targets.cold.p50Ms && family.p90Ms <= targets.cold.p90Ms && family.maxMs <= targets.cold.maxMs,
    }));
    const probe = { ...cold.probe, met: cold.probe.p99Ms <= targets.probeP99Ms };

    log('reports: summaries of new quarters by day and source, of everything by month and cart, and the export of every conversion...');
    const reports = await measureReports(service.baseUrl, API_KEY, servicePid, options.conversions, SEED);
    const reportsMet = {
      quarter: reports.quarterByDayAndSource.p50Ms <= targets.reports.quarterP50Ms,
      everything: reports.everythingByMonthAndCart.maxMs <= targets.reports.everythingMaxMs,
      export:
        reports.export.rowsPerSecond >= targets.reports.exportRowsPerSecond &&
        reports.export.rssGrowthMiB !== undefined &&
        reports.export.rssGrowthMiB <= TARGETS.exportGrowthMiB,
    };

    log('console: the first page in a fresh browser, then each tab signed in...');
    const consoleTimes = await measureConsole(service.baseUrl, API_KEY);
    const consoleMet = consoleTimes !== undefined && Math.max(...consoleTimes.firstPageMs) <= TARGETS.consoleFirstPageMs;

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
    const servicePeakRssMiB = processMemoryMiB(servicePid, 'VmHWM');
    await stop(service.child);
    // Once nothing timed shares the machine with it (and the server's peak is read).
    log('copying the conversions into a copy of their table with every index, in the database alone...');
    const floorDatabase = openDatabase({ ...current.storage, poolSize: 1 });
    const floorSeconds = await engineFloorSeconds(floorDatabase).finally(() => floorDatabase.close());
    const floorRowsPerSecond = options.conversions / floorSeconds;

    // The baseline last, alone on the machine: the same warm families, the same URLs and times.
    let baselineReport: Record<string, unknown> | undefined;
    if (baseline) {
      const stack = await startStack('baseline', baseline.dir, ndjson, workDir, cleanups);
      const baselineFetched: Fetched[] = [];
      for (const { scenario } of fetched) baselineFetched.push(await fetchFamily(stack.service.baseUrl, scenario));
      const baselineCheck = await checkAnswers(baselineFetched, ndjson, stack.storage);
      if (baselineCheck.problems.length > 0) log(`baseline: WRONG ANSWERS (the comparison stands, but look):\n${baselineCheck.problems.join('\n')}`);
      else log(`baseline: checked ${baselineCheck.checked} answers against the data: all right`);
      for (const row of rows) {
        const { scenario } = fetched.find((item) => item.scenario.id === row.scenario)!;
        log(`baseline ${row.scenario}: ${options.warmupSeconds} + ${options.durationSeconds} s...`);
        const measured = await measure(
          `baseline ${row.scenario}`,
          stack.service,
          scenario.members.map((member) => member.path),
        );
        row.baseline = {
          requestsPerSecond: measured.requestsPerSecond,
          p50Ms: measured.p50Ms,
          p99Ms: measured.p99Ms,
          serverRssMiB: measured.serverRssMiB,
          failedRequests: measured.non2xx + measured.errors + measured.timeouts,
        };
      }
      const baselinePeakRssMiB = memoryMiB(stack.service.child.pid!, 'VmHWM');
      await stop(stack.service.child);
      baselineReport = {
        ref: options.baseline,
        commit: baseline.commit,
        import: stack.import,
        caughtUp: stack.caughtUp,
        otherAccount: stack.otherAccount,
        peakRssMiB: baselinePeakRssMiB,
        answersChecked: baselineCheck.checked,
        wrongAnswers: baselineCheck.problems,
      };
    }

    const importMet = current.import.rowsPerSecond >= targets.importRowsPerSecond;
    const memoryMet = peakRssMiB !== undefined && peakRssMiB <= TARGETS.rssMiB;
    const uploadMet = uploadGrowthMiB !== undefined && uploadGrowthMiB <= TARGETS.uploadGrowthMiB;
    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const commit = git(['rev-parse', '--short', 'HEAD']);
    const dirty = git(['status', '--porcelain', '--untracked-files=no', '--', 'src']) !== '';
    const baselineName = baseline ? `base ${baseline.commit.slice(0, 7)}` : undefined;

    console.log(
      `\nacds benchmark: ${engine}, ${options.conversions} conversions, ${options.assets} assets; ${options.connections} connections, ${options.durationSeconds} s per run after ${options.warmupSeconds} s of warm-up; ${options.coldQuestions} cold questions per family`,
    );
    console.log(
      `commit ${commit || '?'}${dirty ? ' (src/ with uncommitted changes)' : ''}${options.serviceLog ? ` (the service logging every request to ${options.serviceLog}: slower)` : ''}${baseline ? `, baseline ${baseline.commit.startsWith(options.baseline!) ? baseline.commit.slice(0, 7) : `${options.baseline} = ${baseline.commit.slice(0, 7)}`}` : ''}, Node ${process.version}, ${os.cpus().length} x ${cpu}; ${canPin ? 'server on core 0, autocannon, the cold client and the import on core 1' : 'NOT pinned (no taskset or one core)'}\n`,
    );
    console.log(warmTable(rows, baselineName));
    console.log('');
    for (const row of rows) console.log(`${row.scenario}: ${row.title} (${row.urls} URLs)`);
    console.log('');
    console.log(coldTable(coldFamilyRows, probe));
    console.log('');
    for (const row of coldFamilyRows) console.log(`${row.family}: e.g. ${row.example}`);
    console.log(
      `probe: one buyer's conversions (a buyer of the data drawn each time) p99 ${fixed(probe.buyer.p99Ms, 1)} ms${probe.asset ? `, the public asset p99 ${fixed(probe.asset.p99Ms, 1)} ms` : ''}; service peak RSS during the cold questions ${fixed(coldRssMiB)} MiB`,
    );
    console.log(`the service's main thread during the cold questions: ${describeMainThread(mainThread)}`);
    const { quarterByDayAndSource: quarter, everythingByMonthAndCart: everything } = reports;
    console.log(
      `\nsummary of a new quarter by day,utm_source: ${quarter.asked} asked, p50 ${fixed(quarter.p50Ms, 1)} ms, max ${fixed(quarter.maxMs, 1)} ms (target p50 ≤${targets.reports.quarterP50Ms} ms): ${yes(reportsMet.quarter)}  e.g. ${quarter.example}`,
    );
    console.log(
      `summary of everything by month,cart_integration, each in a new time zone: ${everything.asked} asked, the first (its buyers counted) ${fixed(everything.firstMs, 1)} ms, p50 ${fixed(everything.p50Ms, 1)} ms, max ${fixed(everything.maxMs, 1)} ms (target ≤${targets.reports.everythingMaxMs} ms): ${yes(reportsMet.everything)}`,
    );
    console.log(
      `export of all ${reports.export.rows} as NDJSON, uncompressed: ${reports.export.seconds.toFixed(1)} s = ${reports.export.rowsPerSecond.toFixed(0)} rows/s (target ≥${targets.reports.exportRowsPerSecond}), server RSS grew ${fixed(reports.export.rssGrowthMiB)} MiB (target ≤${TARGETS.exportGrowthMiB}): ${yes(reportsMet.export)}`,
    );
    console.log(
      consoleTimes
        ? `console: first page usable in ${consoleTimes.firstPageMs.map((ms) => ms.toFixed(0)).join(', ')} ms (fresh browser each time; target ≤${TARGETS.consoleFirstPageMs} ms): ${yes(consoleMet)}; signed in, each tab's answer shown in: ${consoleTimes.tabsMs.map(({ tab, ms }) => `${tab} ${ms.toFixed(0)} ms`).join(', ')}`
        : `console: NOT measured (no Chromium at ${CHROMIUM_PATH})`,
    );
    console.log('');
    console.log(
      `import (the service running): ${options.conversions} rows in ${current.import.seconds.toFixed(1)} s = ${current.import.rowsPerSecond.toFixed(0)} rows/s (target ≥${targets.importRowsPerSecond}): ${yes(importMet)}`,
    );
    console.log(
      `  caught up after import: a new question counted every row ${current.caughtUp.ms.toFixed(0)} ms after the import ended (question ${current.caughtUp.polls}, asked every ${CATCH_UP_POLL_MS} ms)`,
    );
    console.log(`  meanwhile, another account's new questions (every tenth an export): ${describeOtherAccount(current.otherAccount)}`);
    console.log(
      `  the database alone, copying those rows into a copy of their table with every index: ${floorSeconds.toFixed(1)} s = ${floorRowsPerSecond.toFixed(0)} rows/s, the most any import can reach here`,
    );
    if (baselineReport) {
      const stack = baselineReport as {
        import: Stack['import'];
        caughtUp: Stack['caughtUp'];
        otherAccount: Stack['otherAccount'];
        peakRssMiB: number | undefined;
      };
      console.log(
        `  ${baselineName}: import ${stack.import.rowsPerSecond.toFixed(0)} rows/s, caught up ${stack.caughtUp.ms.toFixed(0)} ms after it, another account's questions meanwhile ${describeOtherAccount(stack.otherAccount)}, peak RSS ${fixed(stack.peakRssMiB)} MiB`,
      );
    }
    console.log(
      `memory: server peak RSS ${fixed(peakRssMiB)} MiB over the whole run, the sum of each process's peak: the service's ${fixed(servicePeakRssMiB)}, its index's ${fixed(peakRssMiB !== undefined && servicePeakRssMiB !== undefined ? peakRssMiB - servicePeakRssMiB : undefined)} (target ≤${TARGETS.rssMiB} MiB): ${yes(memoryMet)}`,
    );
    console.log(
      `upload: 1 GiB in ${uploadSeconds.toFixed(1)} s, server RSS grew ${fixed(uploadGrowthMiB)} MiB (target ≤${TARGETS.uploadGrowthMiB} MiB): ${yes(uploadMet)}`,
    );
    console.log(
      `answers: ${checked} warm and ${cold.answersChecked} cold checked against the data, all right${baselineReport ? `; the baseline's ${(baselineReport.wrongAnswers as string[]).length === 0 ? 'too' : `WRONG (${(baselineReport.wrongAnswers as string[]).length})`}` : ''}`,
    );
    const missing = [
      ...rows.filter((row) => !row.met).map((row) => row.scenario),
      ...coldFamilyRows.filter((row) => !row.met).map((row) => `cold ${row.family}`),
      ...(probe.met ? [] : ['probe']),
      ...Object.entries(reportsMet)
        .filter(([, met]) => !met)
        .map(([name]) => `reports ${name}`),
      ...(consoleMet ? [] : ['console']),
      ...(importMet ? [] : ['import']),
      ...(memoryMet ? [] : ['memory']),
      ...(uploadMet ? [] : ['upload']),
    ];
    const allMet = missing.length === 0;
    console.log(`targets: ${allMet ? 'ALL met' : `NOT all met (missed: ${missing.join(', ')})`}`);

    const resultsDir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const resultsFile = path.join(resultsDir, `${startedAt.toISOString().replace(/[:.]/g, '-')}-${engine}.json`);
    const report = {
      engine,
      startedAt: startedAt.toISOString(),
      commit,
      srcUncommitted: dirty,
      machine: { cpu, cpus: os.cpus().length, memoryGiB: os.totalmem() / 1024 ** 3, node: process.version, pinned: canPin },
      options: {
        conversions: options.conversions,
        assets: options.assets,
        durationSeconds: options.durationSeconds,
        warmupSeconds: options.warmupSeconds,
        connections: options.connections,
        coldQuestions: options.coldQuestions,
        baseline: options.baseline,
      },
      targets: { ...targets, rssMiB: TARGETS.rssMiB, uploadGrowthMiB: TARGETS.uploadGrowthMiB },
      import: {
        rows: options.conversions,
        seconds: current.import.seconds,
        rowsPerSecond: current.import.rowsPerSecond,
        met: importMet,
        caughtUpMs: current.caughtUp.ms,
        caughtUpQuestions: current.caughtUp.polls,
        otherAccountMeanwhile: current.otherAccount,
      },
      engineFloor: { seconds: floorSeconds, rowsPerSecond: floorRowsPerSecond },
      scenarios: rows,
      cold: {
        questionsPerFamily: options.coldQuestions,
        families: coldFamilyRows,
        probe: { everyMs: PROBE_EVERY_MS, assetUrl, ...probe },
        serverRssMiB: coldRssMiB,
        mainThread,
      },
      reports: { ...reports, met: reportsMet },
      console: consoleTimes ? { ...consoleTimes, met: consoleMet } : undefined,
      memory: { peakRssMiB, servicePeakRssMiB, met: memoryMet },
      upload: { bytes: UPLOAD_BYTES, seconds: uploadSeconds, restingRssMiB, peakRssMiB: uploadPeakMiB, growthMiB: uploadGrowthMiB, met: uploadMet },
      answersChecked: checked + cold.answersChecked,
      baseline: baselineReport,
      missed: missing,
      allMet,
    };
    fs.writeFileSync(resultsFile, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`written to ${path.relative(ROOT, resultsFile)}`);
    return 0;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: Error) => log(`cleaning up: ${error.message}`));
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

// Ctrl-C: stop what this run started (the finally above does not run on a signal).
process.once('SIGINT', () => {
  for (const child of children) child.kill('SIGKILL');
  removeWorktree?.();
  process.exit(130);
});

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(`\n[bench] FAILED: ${error instanceof Error ? (error instanceof BenchFailure ? error.message : error.stack) : String(error)}`);
    process.exitCode = 1;
  },
);
