/**
 * `npm run bench:hooks`: are cart notifications stored as fast as a busy shop's carts send them,
 * and do lists stay fast meanwhile? A benchmark, not a test.
 *
 *   npm run bench:hooks -- [--conversions 1000000] [--rate 1000] [--seconds 10] [--warmup 5]
 *                          [--database postgres://user@host:5432/postgres] [--summaries] [--cpu-prof DIR]
 *
 * It imports --conversions to start from, starts the real service (compiled, as `npm start` runs
 * it) pinned to core 0, connects the generic receiver with the command line, and once the
 * columnar index has caught up, at once: a sender pinned to core 1 posts --rate signed
 * notifications a second for --seconds to that one receiver (each a new sale, so each makes a
 * conversion), while a list client, pinned to core 1 as well, asks new list questions one after
 * another (NEW_QUESTION_FAMILIES, each asked once) and a probe every 50 ms for one buyer's
 * conversions; with --summaries, also a summary of a new quarter by day and source once a second,
 * as a dashboard open on the account would ask. The same stream runs --warmup seconds first,
 * unmeasured, as the list benchmarks warm up: a service just started spends its first seconds of
 * a new kind of work compiling its code (docs/performance.md). It then checks that every
 * acknowledged notification is a cart event and a conversion, and prints the rates and latencies
 * beside the targets, the slowest question, and how the service's core was split meanwhile.
 * --cpu-prof writes the service's CPU profiles (each thread's) into DIR, for Chrome's DevTools or
 * speedscope.
 */
import type { ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SERVICE_NODE_FLAGS } from '../src/cli/node-flags.js';
import { newQuestions } from './scenarios.js';
import {
  build,
  children,
  CLIENT_NODE_FLAGS,
  cpuSplit,
  freshPostgres,
  latencies,
  listeningAddress,
  memoryMiB,
  runPinned,
  startPinned,
  threadCpuSeconds,
  writeConversions,
} from './service.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLI = 'dist/cli.js';
const API_KEY = `acds_bench_${'n'.repeat(32)}`;
const SECRET = 'whsec_bench_secret_0123456789';
const PROBE_EVERY_MS = 50;
const SUMMARY_EVERY_MS = 1000;
const DAY_MS = 24 * 3600 * 1000;
// The columnar issue's targets for new questions and the probe (SQLite; PostgreSQL in brackets).
const TARGETS = { sqlite: { p50Ms: 15, p90Ms: 40, maxMs: 100, probeP99Ms: 20 }, postgres: { p50Ms: 50, p90Ms: 120, maxMs: 250, probeP99Ms: 30 } };

interface SenderOptions {
  url: string;
  rate: number;
  seconds: number;
}
interface SenderResult {
  sent: number;
  statuses: Record<string, number>;
  acknowledged: string[];
  replyMs: number[];
  seconds: number;
}
interface AskerOptions {
  baseUrl: string;
  apiKey: string;
  /** The probe's buyer. */
  buyer: string;
  seconds: number;
  /** The questions asked before, in this run: each question is new. */
  asked: string[];
  /** The first and last month the data spans (ms since 1970), when summaries are asked too. */
  summaries?: { firstMs: number; lastMs: number };
}
interface AskerResult {
  questionMs: number[];
  probeMs: number[];
  summaryMs: number[];
  failures: string[];
  slowest: { ms: number; atSeconds: number; query: string };
  /** Every question asked, before this stream's included. */
  asked: string[];
}

const log = (line: string) => console.error(`[hooks] ${line}`);

// Each sender's own receipts and event ids, so that a sender run again against the same service sends new sales.
const SENDER_RUN = Date.now().toString(36);

function signedEvent(index: number): { body: string; signature: string; receipt: string } {
  const receipt = `HOOK-${SENDER_RUN}-${index}`;
  const body = JSON.stringify({
    event_id: `bench-${SENDER_RUN}-${index}`,
    event: 'sale',
    occurred_at: `${new Date().toISOString().slice(0, 19)}Z`,
    cart_integration: 'clickbank',
    receipt,
    amount: 10 + (index % 90),
    currency: 'USD',
    email: `buyer${index % 5000}@example.com`,
    utm_source: ['facebook', 'google', 'tiktok'][index % 3],
    products: [{ sku: 'bench-1', price: 10 + (index % 90), qty: 1 }],
  });
  const t = Math.floor(Date.now() / 1000);
  return { body, receipt, signature: `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}` };
}

/** The sender: `rate` notifications a second, paced every 10 ms, over kept-alive connections. */
async function send({ url, rate, seconds }: SenderOptions): Promise<SenderResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const target = new URL(url);
  const result: SenderResult = { sent: 0, statuses: {}, acknowledged: [], replyMs: [], seconds: 0 };
  const post = (index: number) =>
    new Promise<void>((resolve) => {
      const { body, signature, receipt } = signedEvent(index);
      const began = performance.now();
      const request = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-signature': signature },
        },
        (response) => {
          response.resume();
          response.on('end', () => {
            result.replyMs.push(performance.now() - began);
            result.statuses[response.statusCode!] = (result.statuses[response.statusCode!] ?? 0) + 1;
            if (response.statusCode === 200) result.acknowledged.push(receipt);
            resolve();
          });
        },
      );
      request.on('error', (error) => {
        result.statuses[error.message] = (result.statuses[error.message] ?? 0) + 1;
        resolve();
      });
      request.end(body);
    });
  const pending: Promise<void>[] = [];
  const began = performance.now();
  const total = rate * seconds;
  while (result.sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - began) / 1000) * rate) + 1);
    while (result.sent < due) pending.push(post(result.sent++));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await Promise.all(pending);
  result.seconds = (performance.now() - began) / 1000;
  agent.destroy();
  return result;
}

/** The list client: new list questions one after another, the probe every PROBE_EVERY_MS and any summaries every SUMMARY_EVERY_MS beside them, for `seconds`. */
async function ask({ baseUrl, apiKey, buyer, seconds, asked: askedBefore, summaries }: AskerOptions): Promise<AskerResult> {
  const headers = { 'x-api-key': apiKey };
  const asked = new Set(askedBefore);
  const probeUrl = `${baseUrl}/api/v1/conversions?user_id=${encodeURIComponent(buyer)}`;
  // Untimed: this process's first request loads its HTTP client and opens its connection, the client's time, not the service's.
  await timed(probeUrl, headers);
  const result: AskerResult = { questionMs: [], probeMs: [], summaryMs: [], failures: [], slowest: { ms: 0, atSeconds: 0, query: '' }, asked: [] };
  const began = performance.now();
  const asking = () => performance.now() - began < seconds * 1000;
  const questions = (async () => {
    while (asking()) {
      for (const { query } of newQuestions(Math.random, 1, asked)) {
        const answer = await timed(`${baseUrl}/api/v1/conversions?${query}`, headers);
        result.questionMs.push(answer.ms);
        if (answer.ms > result.slowest.ms) result.slowest = { ms: answer.ms, atSeconds: (performance.now() - answer.ms - began) / 1000, query };
        if (answer.status !== 200) result.failures.push(`question ${answer.status}`);
      }
    }
  })();
  // A quarter starting on a day drawn at random, each a second later than the one before: each summary is new.
  const summariesAsked = (async () => {
    for (let index = 0; summaries && asking(); index++) {
      const summaryBegan = performance.now();
      const days = Math.max(1, (summaries.lastMs - summaries.firstMs) / DAY_MS - 90);
      const start = summaries.firstMs + Math.floor(Math.random() * days) * DAY_MS + index * 1000;
      const [from, to] = [start, start + 90 * DAY_MS].map((ms) => `${new Date(ms).toISOString().slice(0, 19)}Z`);
      const answer = await timed(`${baseUrl}/api/v1/conversions/summary?group_by=day,utm_source&created_at.between=${from},${to}`, headers);
      result.summaryMs.push(answer.ms);
      if (answer.status !== 200) result.failures.push(`summary ${answer.status}`);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, SUMMARY_EVERY_MS - (performance.now() - summaryBegan))));
    }
  })();
  while (asking()) {
    const probeBegan = performance.now();
    const answer = await timed(probeUrl, headers);
    result.probeMs.push(answer.ms);
    if (answer.status !== 200) result.failures.push(`probe ${answer.status}`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, PROBE_EVERY_MS - (performance.now() - probeBegan))));
  }
  await Promise.all([questions, summariesAsked]);
  result.asked = [...asked];
  return result;
}

const describe = (ms: number[]) => {
  const { n, p50Ms, p90Ms, p99Ms, maxMs } = latencies(ms);
  return `n ${n}, p50 ${p50Ms.toFixed(1)} ms, p90 ${p90Ms.toFixed(1)} ms, p99 ${p99Ms.toFixed(1)} ms, max ${maxMs.toFixed(1)} ms`;
};

async function timed(url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; body: string }> {
  const began = performance.now();
  const response = await fetch(url, { headers });
  const body = await response.text();
  return { ms: performance.now() - began, status: response.status, body };
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      conversions: { type: 'string', default: '1000000' },
      rate: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '5' },
      database: { type: 'string' },
      summaries: { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
    },
  });
  const conversions = Number(args.conversions);
  const rate = Number(args.rate);
  const seconds = Number(args.seconds);
  const warmupSeconds = Number(args.warmup);
  const engine = args.database ? 'postgres' : 'sqlite';
  const targets = TARGETS[engine];

  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acds-hooks-'));
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  if (args.database) ({ url: databaseUrl, drop: dropDatabase } = await freshPostgres(args.database, 'acds_hooks'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: path.join(workDir, 'data'),
    DATABASE_URL: databaseUrl ?? '',
    REDIS_URL: '',
    S3_BUCKET: '',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    BOOTSTRAP_API_KEY: API_KEY,
  };
  const cli = (cliArgs: string[]) => runPinned(1, CLI, cliArgs, { cwd: ROOT, env });
  let server: ChildProcess | undefined;
  try {
    build(ROOT);
    const seedFile = path.join(workDir, 'seed.ndjson');
    writeConversions(seedFile, conversions, 1);
    log(`${engine}: importing ${conversions} conversions to start from...`);
    await cli(['migrate']);
    const nodeFlags = [...SERVICE_NODE_FLAGS, ...(args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args['cpu-prof'])}`] : [])];
    server = startPinned(0, CLI, ['serve'], { cwd: ROOT, env: { ...env, PORT: '0' }, nodeFlags });
    const baseUrl = await listeningAddress(server, 'the service');
    await cli(['conversions', 'import', seedFile]);
    const hookPath = (await cli(['carts', 'connect', 'generic', '--secret', SECRET])).trim().split('\n').at(-1)!;
    const headers = { 'x-api-key': API_KEY };
    // 0 while the index catches up on the import (a 503: it did not answer within the service's time limit).
    const totalOf = async (query: string) => {
      const { status, body } = await timed(`${baseUrl}${query}`, headers);
      return status === 503 ? 0 : (JSON.parse(body) as { totalEntries: number }).totalEntries;
    };
    while ((await totalOf('/api/v1/conversions')) < conversions) await new Promise((resolve) => setTimeout(resolve, 500));
    const buyer = (JSON.parse((await timed(`${baseUrl}/api/v1/conversions?page=7`, headers)).body) as { entries: { user_id: string }[] }).entries[0]!.user_id;
    log(`service ${baseUrl}, caught up; the receiver ${hookPath.slice(0, 22)}...`);
    // The months the data spans, so that every quarter summarised holds conversions.
    let summaries: AskerOptions['summaries'];
    if (args.summaries) {
      const months = (
        JSON.parse((await timed(`${baseUrl}/api/v1/conversions/summary?group_by=month`, headers)).body) as { groups: { key: { month: string } }[] }
      ).groups;
      summaries = { firstMs: Date.parse(`${months[0]!.key.month}T00:00:00Z`), lastMs: Date.parse(`${months.at(-1)!.key.month}T00:00:00Z`) };
    }

    // Every question new, over the warm-up and the measured stream alike.
    const asked = new Set<string>();
    /**
     * `streamSeconds` of notifications at `rate` a second from the sender, and as long of new list
     * questions and the probe from the list client, all at once; the service's RSS read meanwhile.
     */
    const stream = async (streamSeconds: number) => {
      const senderFile = path.join(workDir, 'sender.json');
      fs.writeFileSync(senderFile, JSON.stringify({ url: `${baseUrl}${hookPath}`, rate, seconds: streamSeconds } satisfies SenderOptions));
      const askerFile = path.join(workDir, 'asker.json');
      fs.writeFileSync(
        askerFile,
        JSON.stringify({ baseUrl, apiKey: API_KEY, buyer, seconds: streamSeconds, asked: [...asked], summaries } satisfies AskerOptions),
      );
      const client = (mode: string, file: string) => runPinned(1, 'bench/hooks.ts', [mode, file], { cwd: ROOT, nodeFlags: CLIENT_NODE_FLAGS });
      let sending = true;
      const sender = client('--send', senderFile).finally(() => (sending = false));
      const asker = client('--ask', askerFile);
      let peakRss = 0;
      while (sending) {
        peakRss = Math.max(peakRss, memoryMiB(server!.pid!, 'VmRSS') ?? 0);
        await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
      }
      const answered = JSON.parse(await asker) as AskerResult;
      for (const query of answered.asked) asked.add(query);
      return { sent: JSON.parse(await sender) as SenderResult, ...answered, peakRss };
    };

    let warmedUp: SenderResult | undefined;
    if (warmupSeconds > 0) {
      log(`warming up: the same stream for ${warmupSeconds} s, not measured...`);
      warmedUp = (await stream(warmupSeconds)).sent;
    }
    log(`sending ${rate} notifications a second for ${seconds} s, measured...`);
    const cpuBefore = threadCpuSeconds(server.pid!);
    const cpuReadAt = performance.now();
    const { sent, questionMs, probeMs, summaryMs, failures, slowest, peakRss } = await stream(seconds);
    const core = cpuSplit(server.pid!, cpuBefore, threadCpuSeconds(server.pid!));
    const coreSeconds = (performance.now() - cpuReadAt) / 1000;

    const everySent = sent.sent + (warmedUp?.sent ?? 0);
    const acknowledged = sent.acknowledged.length + (warmedUp?.acknowledged.length ?? 0);
    const events = await totalOf('/api/v1/cart-events?receipt.between=HOOK-,HOOK-~');
    const converted = await totalOf('/api/v1/conversions?receipt.between=HOOK-,HOOK-~');
    const questions = latencies(questionMs);
    const probe = latencies(probeMs);
    const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
    console.log(`engine ${engine}, ${conversions} conversions to start from, server pinned to core 0`);
    console.log(
      `notifications: ${sent.sent} sent in ${sent.seconds.toFixed(1)} s (${(sent.sent / sent.seconds).toFixed(0)}/s); replies ${JSON.stringify(sent.statuses)}; reply ${describe(sent.replyMs)}`,
    );
    console.log(
      `stored: ${events} cart events and ${converted} conversions of ${acknowledged} acknowledged, warm-up included (${verdict(events === everySent && converted === everySent && acknowledged === everySent)}: every one sent)`,
    );
    console.log(
      `new list questions meanwhile: ${describe(questionMs)} (target p50 ≤ ${targets.p50Ms}, p90 ≤ ${targets.p90Ms}, max ≤ ${targets.maxMs} ms: ${verdict(questions.p50Ms <= targets.p50Ms && questions.p90Ms <= targets.p90Ms && questions.maxMs <= targets.maxMs)})`,
    );
    console.log(`the slowest question: ${slowest.ms.toFixed(1)} ms, asked ${slowest.atSeconds.toFixed(1)} s into the stream: ?${slowest.query}`);
    console.log(`probe, one buyer's conversions: ${describe(probeMs)} (target p99 ≤ ${targets.probeP99Ms} ms: ${verdict(probe.p99Ms <= targets.probeP99Ms)})`);
    // No target of their own: the reports' targets are for a service not receiving notifications.
    if (args.summaries) console.log(`summaries of a new quarter by day,utm_source meanwhile, one a second: ${describe(summaryMs)}`);
    console.log(
      `the service's core meanwhile: its event loop ${core.mainThread.toFixed(2)} s, its other threads (SQLite, V8's collector) ${core.otherThreads.toFixed(2)} s, the index's process ${core.children.toFixed(2)} s, over ${coreSeconds.toFixed(1)} s`,
    );
    console.log(
      `failures: ${failures.length === 0 ? 'none' : `${failures.length} (first: ${failures[0]})`}; service peak RSS meanwhile ${peakRss.toFixed(0)} MiB`,
    );
    if (args['cpu-prof']) {
      // A profile is written when the process exits of itself.
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
      log(`CPU profiles in ${args['cpu-prof']}`);
    }
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await dropDatabase().catch(() => {});
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--send') {
  const result = await send(JSON.parse(fs.readFileSync(process.argv[3]!, 'utf8')) as SenderOptions);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else if (process.argv[2] === '--ask') {
  const result = await ask(JSON.parse(fs.readFileSync(process.argv[3]!, 'utf8')) as AskerOptions);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  await main();
}
