/**
 * `npm run bench:hostile`: does one client asking the heaviest questions the filter language
 * allows, while an import runs, hold up everybody else? A benchmark, not a test.
 *
 *   npm run bench:hostile -- [--conversions 200000] [--import 200000] [--seconds 60]
 *                            [--questions heaviest|new] [--no-import] [--no-heavy]
 *                            [--database postgres://user@host:5432/postgres]
 *
 * With --questions new the client asks what a reporting client asks instead, each question new
 * (NEW_QUESTION_FAMILIES in scenarios.ts), and the latencies are printed per family.
 *
 * It seeds a fresh database with --conversions, starts the real service (compiled, as `npm start`
 * runs it), then at once: one client sends heavy filters back to back (every column, every
 * modifier, values drawn anew for each request so no cache answers); the command line imports
 * --import more conversions into the same account; and a probe asks every 50 ms for one buyer's
 * conversions and for a public asset, as a landing page would. It prints the probe's latencies
 * (the target: p99 at most 50 ms), what the heavy client got, and the service's peak memory.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SERVICE_NODE_FLAGS } from '../src/cli/node-flags.js';
import { day, newQuestions } from './scenarios.js';
import { build, children, freshPostgres, latencies, listeningAddress, memoryMiB, runPinned, startPinned, writeConversions } from './service.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLI = 'dist/cli.js';
const API_KEY = `acds_bench_${'h'.repeat(32)}`;
const PROBE_EVERY_MS = 50;
const PROBE_P99_TARGET_MS = 50;

const { values: args } = parseArgs({
  options: {
    conversions: { type: 'string', default: '200000' },
    import: { type: 'string', default: '200000' },
    seconds: { type: 'string', default: '60' },
    database: { type: 'string' },
    // To tell the two loads apart: leave the heavy client or the import out.
    'no-heavy': { type: 'boolean', default: false },
    // 'new': instead of the heaviest filters, the questions a reporting client asks, each new.
    questions: { type: 'string', default: 'heaviest' },
    'no-import': { type: 'boolean', default: false },
  },
});
const options = {
  conversions: Number(args.conversions),
  importRows: Number(args.import),
  seconds: Number(args.seconds),
  serverUrl: args.database,
};
const engine = options.serverUrl ? 'postgres' : 'sqlite';
const log = (line: string) => console.error(`[hostile] ${line}`);

// The service, the command line and the clients share the machine, unpinned (startPinned(undefined)).
const cli = (cliArgs: string[], env: NodeJS.ProcessEnv) => runPinned(undefined, CLI, cliArgs, { cwd: ROOT, env });

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

/** A question as heavy as the filter language allows: ranges and lists on many columns at once, a deep page. */
function heavyQuestion(): string {
  const from = Math.floor(Math.random() * 500);
  const low = (Math.random() * 50).toFixed(2);
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const parameters = [
    `tracking_codes.gte=${pick(['a', 'tc-', 'tc-1'])}`,
    `tracking_codes.lte=${pick(['zz', 'tc-9', 'tc-z'])}`,
    `tracking_codes.in=tc-facebook,tc-google,tc-${Math.floor(Math.random() * 50)}`,
    `amount.gte=${low}`,
    `amount.lte=${(Number(low) + 200).toFixed(2)}`,
    `created_at.between=${day(from)},${day(from + 300)}`,
    `country.in=${pick(['US,GB,DE', 'US,CA', 'FR,NL,ES,DE'])}`,
    `cart_integration.in=${pick(['clickbank,digistore', 'buygoods,konnektive,stickyio', 'svencart,clickbank'])}`,
    `first_name.gte=${pick(letters.split(''))}`,
    `last_name.lte=${pick(letters.split('')).toLowerCase()}`,
    `receipt.gt=R-${Math.floor(Math.random() * 10)}`,
    `zip_code.gte=${Math.floor(Math.random() * 90000)}`,
    `utm_source.in=facebook,google,tiktok,youtube`,
    `page=${1 + Math.floor(Math.random() * 20)}`,
  ];
  return `/api/v1/conversions?${parameters.join('&')}`;
}

function summary(ms: number[]): string {
  const { n, p50Ms, p90Ms, p99Ms, maxMs } = latencies(ms);
  return `n ${n}, p50 ${p50Ms.toFixed(1)} ms, p90 ${p90Ms.toFixed(1)} ms, p99 ${p99Ms.toFixed(1)} ms, max ${maxMs.toFixed(1)} ms`;
}

async function timed(url: string, headers: Record<string, string> = {}): Promise<{ ms: number; status: number }> {
  const began = performance.now();
  const response = await fetch(url, { headers });
  await response.arrayBuffer();
  return { ms: performance.now() - began, status: response.status };
}

async function main(): Promise<number> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acds-hostile-'));
  const dataDir = path.join(workDir, 'data');
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  if (options.serverUrl) ({ url: databaseUrl, drop: dropDatabase } = await freshPostgres(options.serverUrl, 'acds_hostile'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl ?? '',
    REDIS_URL: '',
    S3_BUCKET: '',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    PUBLIC_RATE_LIMIT_PER_MINUTE: '0',
    BOOTSTRAP_API_KEY: API_KEY,
  };
  let server: ChildProcess | undefined;
  try {
    build(ROOT);
    const seedFile = path.join(workDir, 'seed.ndjson');
    const importFile = path.join(workDir, 'import.ndjson');
    writeConversions(seedFile, options.conversions, 1);
    writeConversions(importFile, options.importRows, 2);
    log(`${engine}: importing ${options.conversions} conversions to start from...`);
    await cli(['conversions', 'import', seedFile], env);
    await cli(['seed', '--conversions', '0', '--assets', '5'], env);

    server = startPinned(undefined, CLI, ['serve'], { cwd: ROOT, env: { ...env, PORT: '0' }, nodeFlags: SERVICE_NODE_FLAGS });
    const baseUrl = await listeningAddress(server, 'the service');
    const headers = { 'x-api-key': API_KEY };
    const assets = (await (await fetch(`${baseUrl}/api/v1/assets`, { headers })).json()) as { entries: { public_url: string | null }[] };
    const assetUrl = assets.entries.find((entry) => entry.public_url)?.public_url;
    if (!assetUrl) throw new Error('no public asset to probe');
    const buyer = ((await (await fetch(`${baseUrl}/api/v1/conversions?page=7`, { headers })).json()) as { entries: { user_id: string }[] }).entries[0]!.user_id;
    log(`service ${baseUrl}; probing ${assetUrl} and the conversions of ${buyer}`);

    const deadline = performance.now() + options.seconds * 1000;
    let importing = true;
    const importDone = (
      args['no-import']
        ? new Promise<string>((resolve) => setTimeout(resolve, options.seconds * 1000, 'left out'))
        : cli(['conversions', 'import', importFile], env)
    )
      .then(
        (out) => log(`import finished: ${out.trim()}`),
        (error: Error) => log(`import failed: ${error.message}`),
      )
      .finally(() => (importing = false));

    const heavy: { ms: number; status: number; family: string }[] = [];
    // --questions new: one of each family in turn, none asked before in the run (newQuestions).
    const asked = new Set<string>();
    let queued: { family: string; query: string }[] = [];
    const nextQuestion = (): { family: string; url: string } => {
      if (args.questions !== 'new') return { family: 'heaviest', url: heavyQuestion() };
      if (queued.length === 0) queued = newQuestions(Math.random, 1, asked);
      const { family, query } = queued.shift()!;
      return { family, url: `/api/v1/conversions?${query}` };
    };
    const heavyClient = (async () => {
      while (!args['no-heavy'] && performance.now() < deadline && importing) {
        const { family, url } = nextQuestion();
        heavy.push({ ...(await timed(baseUrl + url, headers)), family });
      }
    })();

    const probeList: number[] = [];
    const probeAsset: number[] = [];
    const probeFailures: string[] = [];
    let peakRss = 0;
    while (performance.now() < deadline && importing) {
      const began = performance.now();
      const [list, asset] = await Promise.all([timed(`${baseUrl}/api/v1/conversions?user_id=${encodeURIComponent(buyer)}`, headers), timed(assetUrl)]);
      probeList.push(list.ms);
      probeAsset.push(asset.ms);
      if (list.status !== 200) probeFailures.push(`list ${list.status}`);
      if (asset.status !== 200) probeFailures.push(`asset ${asset.status}`);
      peakRss = Math.max(peakRss, memoryMiB(server.pid!, 'VmRSS') ?? 0);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, PROBE_EVERY_MS - (performance.now() - began))));
    }
    const stillImporting = importing;
    await heavyClient;
    const statuses = new Map<number, number>();
    for (const { status } of heavy) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const { p99Ms: p99 } = latencies([...probeList, ...probeAsset]);
    console.log(
      `engine ${engine}, ${options.conversions} conversions, importing ${options.importRows} more (${stillImporting ? 'still running at the end of the probe' : 'finished during the probe'})`,
    );
    for (const family of new Set(heavy.map((h) => h.family))) {
      console.log(`questions, ${family}: ${summary(heavy.filter((h) => h.family === family).map((h) => h.ms))}`);
    }
    console.log(`question answers: ${[...statuses].map(([status, n]) => `${n} × ${status}`).join(', ')}`);
    console.log(`probe, one buyer's conversions: ${summary(probeList)}`);
    console.log(`probe, a public asset: ${summary(probeAsset)}`);
    console.log(
      `probe, both: p99 ${p99.toFixed(1)} ms (target ≤ ${PROBE_P99_TARGET_MS} ms: ${p99 <= PROBE_P99_TARGET_MS ? 'met' : 'NOT met'}); failures: ${probeFailures.length === 0 ? 'none' : `${probeFailures.length} (first: ${probeFailures[0]})`}`,
    );
    console.log(`service peak RSS while probing: ${peakRss.toFixed(0)} MiB`);
    await importDone;
    return 0;
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await dropDatabase().catch(() => {});
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
