/**
 * The cold questions of bench/run.ts: what a reporting client asks, each question new (never
 * asked before in the run, so that no cache has its answer), asked once, one after another, from
 * one client, while a probe asks every 50 ms for one buyer's conversions (a buyer drawn anew each
 * time) and for a public asset, as a landing page would.
 *
 * coldFamilies() runs in the benchmark's process: it draws the questions (NEW_QUESTION_FAMILIES),
 * runs this file as the client in its own process on the load generator's core, checks every
 * answer against the data, and sums the latencies up per family. The client:
 *   node --import tsx bench/cold.ts <options.json: ClientOptions>; prints one JSON ClientResult line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { seededRandom } from '../src/conversions/synthetic.js';
import { checkConversionAnswers, type ListAnswer } from './answers.js';
import { newQuestions, NEW_QUESTION_FAMILIES, type DataSummary } from './scenarios.js';
import { BenchFailure, CLIENT_NODE_FLAGS, latencies, runPinned, type Latencies } from './service.js';

export const PROBE_EVERY_MS = 50;
const ROOT = path.resolve(import.meta.dirname, '..');

interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** In the order asked. */
  questions: { family: string; path: string }[];
  /** The probe's buyers: each probe asks for one of them, at random. */
  buyers: string[];
  /** A public asset's URL, or undefined where there is none (no assets seeded). */
  assetUrl: string | undefined;
}

interface ClientResult {
  questions: { ms: number; status: number; answer: ListAnswer | undefined; body: string | undefined }[];
  probe: { buyerMs: number[]; assetMs: number[]; failures: string[] };
}

async function timed(url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; body: string }> {
  const began = performance.now();
  const response = await fetch(url, { headers });
  const body = await response.text();
  return { ms: performance.now() - began, status: response.status, body };
}

/** The client: the questions in turn, and the probe beside them until the last is answered. */
async function askAndProbe(options: ClientOptions): Promise<ClientResult> {
  const headers = { 'x-api-key': options.apiKey };
  const result: ClientResult = { questions: [], probe: { buyerMs: [], assetMs: [], failures: [] } };
  // Untimed: this process's first requests load its HTTP client and open its connections, which
  // is the client's time, not the service's. The first page (S1 asked it already) and the asset.
  await Promise.all([
    timed(`${options.baseUrl}/api/v1/conversions?page=1`, headers),
    timed(`${options.baseUrl}/api/v1/conversions?page=1`, headers),
    options.assetUrl ? timed(options.assetUrl, {}) : undefined,
  ]);
  let asking = true;

  const client = (async () => {
    try {
      for (const { path: url } of options.questions) {
        const { ms, status, body } = await timed(options.baseUrl + url, headers);
        if (status !== 200) {
          result.questions.push({ ms, status, answer: undefined, body: body.slice(0, 500) });
          continue;
        }
        // Only what is checked, so that the result stays small.
        const answer = JSON.parse(body) as ListAnswer;
        const entries = answer.entries.map(({ id, receipt }) => ({ id, receipt }));
        result.questions.push({
          ms,
          status,
          answer: { entries, totalEntries: answer.totalEntries, page: answer.page, totalPages: answer.totalPages },
          body: undefined,
        });
      }
    } finally {
      asking = false;
    }
  })();

  const { probe } = result;
  while (asking) {
    const began = performance.now();
    const buyer = options.buyers[Math.floor(Math.random() * options.buyers.length)]!;
    const [list, asset] = await Promise.all([
      timed(`${options.baseUrl}/api/v1/conversions?user_id=${encodeURIComponent(buyer)}`, headers),
      options.assetUrl ? timed(options.assetUrl, {}) : undefined,
    ]);
    probe.buyerMs.push(list.ms);
    if (list.status !== 200) probe.failures.push(`user_id=${buyer}: ${list.status} ${list.body.slice(0, 200)}`);
    else {
      // The buyer comes from the data: at least one conversion, and only theirs.
      const answer = JSON.parse(list.body) as { totalEntries: number; entries: { user_id: string }[] };
      if (answer.totalEntries < 1 || answer.entries.some((entry) => entry.user_id !== buyer)) {
        probe.failures.push(
          `user_id=${buyer}: totalEntries ${answer.totalEntries}, users ${[...new Set(answer.entries.map((entry) => entry.user_id))].join(',')}`,
        );
      }
    }
    if (asset) {
      probe.assetMs.push(asset.ms);
      if (asset.status !== 200) probe.failures.push(`${options.assetUrl}: ${asset.status}`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, PROBE_EVERY_MS - (performance.now() - began))));
  }
  await client;
  return result;
}

export interface ColdReport {
  families: ({ family: string; example: string } & Latencies)[];
  /** The buyer's conversions and the asset together, and each alone. */
  probe: Latencies & { buyer: Latencies; asset: Latencies | undefined };
  answersChecked: number;
}

/**
 * Asks `count` new questions of each family (interleaved) while the probe runs, from a process of
 * its own on core 1; throws a BenchFailure for any answer that is not a 200 or disagrees with the
 * data, or any failed probe.
 */
export async function coldFamilies(options: {
  baseUrl: string;
  apiKey: string;
  summary: DataSummary;
  assetUrl: string | undefined;
  ndjson: string;
  count: number;
  seed: number;
  workDir: string;
}): Promise<ColdReport> {
  const questions = newQuestions(seededRandom(options.seed), options.count, new Set());
  const clientOptions: ClientOptions = {
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    questions: questions.map(({ family, query }) => ({ family, path: `/api/v1/conversions?${query}` })),
    buyers: [...new Set(options.summary.buyers.map((buyer) => buyer.user_id))],
    assetUrl: options.assetUrl,
  };
  const optionsFile = path.join(options.workDir, 'cold.json');
  fs.writeFileSync(optionsFile, JSON.stringify(clientOptions));
  const result = JSON.parse(await runPinned(1, 'bench/cold.ts', [optionsFile], { cwd: ROOT, nodeFlags: CLIENT_NODE_FLAGS })) as ClientResult;

  const failed = result.questions.flatMap(({ status, body }, index) =>
    status === 200 ? [] : [`${clientOptions.questions[index]!.path} answered ${status}: ${body}`],
  );
  if (failed.length > 0) throw new BenchFailure(`cold questions: ${failed.length} of ${questions.length} not answered:\n${failed.slice(0, 10).join('\n')}`);
  const problems = await checkConversionAnswers(
    questions.map((question, index) => ({
      label: `${question.family} ${clientOptions.questions[index]!.path}`,
      page: question.page,
      answer: result.questions[index]!.answer!,
      matches: question.matches,
    })),
    options.ndjson,
  );
  if (problems.length > 0)
    throw new BenchFailure(`WRONG ANSWERS to cold questions: the service disagrees with the data (${problems.length}):\n${problems.slice(0, 20).join('\n')}`);
  const { probe } = result;
  if (probe.failures.length > 0)
    throw new BenchFailure(`the probe failed ${probe.failures.length} times during the cold questions:\n${probe.failures.slice(0, 10).join('\n')}`);

  return {
    families: Object.keys(NEW_QUESTION_FAMILIES).map((family) => ({
      family,
      example: clientOptions.questions.find((question) => question.family === family)!.path,
      ...latencies(result.questions.filter((_, index) => questions[index]!.family === family).map(({ ms }) => ms)),
    })),
    probe: {
      ...latencies([...probe.buyerMs, ...probe.assetMs]),
      buyer: latencies(probe.buyerMs),
      asset: probe.assetMs.length > 0 ? latencies(probe.assetMs) : undefined,
    },
    answersChecked: questions.length,
  };
}

if (process.argv[1] === import.meta.filename) {
  const options = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as ClientOptions;
  process.stdout.write(`${JSON.stringify(await askAndProbe(options))}\n`);
}
