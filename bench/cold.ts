/**
 * The cold questions' client, run by bench/run.ts as its own process (on the load generator's
 * core): it asks each new question once, one after another, from one client, while a probe asks
 * every 50 ms for one buyer's conversions (a buyer drawn anew each time) and for a public asset,
 * as a landing page would. It times everything and keeps the answers for run.ts to check.
 * Usage: node --import tsx bench/cold.ts <options.json: ColdOptions>; prints one JSON ColdResult line.
 */
import fs from 'node:fs';

export const PROBE_EVERY_MS = 50;

export interface ColdOptions {
  baseUrl: string;
  apiKey: string;
  /** In the order asked. */
  questions: { family: string; path: string }[];
  /** The probe's buyers: each probe asks for one of them, at random. */
  buyers: string[];
  /** A public asset's URL, or undefined where there is none (no assets seeded). */
  assetUrl: string | undefined;
}

/** What run.ts checks of a list answer. */
export interface ListAnswer {
  entries: { id: number; receipt?: string }[];
  totalEntries: number;
  page: number;
  totalPages: number;
}

export interface ColdResult {
  questions: { family: string; path: string; ms: number; status: number; answer: ListAnswer | undefined; body: string | undefined }[];
  probe: { buyerMs: number[]; assetMs: number[]; failures: string[] };
}

async function timed(url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; body: string }> {
  const began = performance.now();
  const response = await fetch(url, { headers });
  const body = await response.text();
  return { ms: performance.now() - began, status: response.status, body };
}

export async function runCold(options: ColdOptions): Promise<ColdResult> {
  const headers = { 'x-api-key': options.apiKey };
  const result: ColdResult = { questions: [], probe: { buyerMs: [], assetMs: [], failures: [] } };
  let asking = true;

  const client = (async () => {
    try {
      for (const { family, path } of options.questions) {
        const { ms, status, body } = await timed(options.baseUrl + path, headers);
        if (status !== 200) {
          result.questions.push({ family, path, ms, status, answer: undefined, body: body.slice(0, 500) });
          continue;
        }
        // Only what is checked, so that the result stays small.
        const answer = JSON.parse(body) as ListAnswer;
        const entries = answer.entries.map(({ id, receipt }) => ({ id, receipt }));
        result.questions.push({ family, path, ms, status, answer: { entries, totalEntries: answer.totalEntries, page: answer.page, totalPages: answer.totalPages }, body: undefined });
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
        probe.failures.push(`user_id=${buyer}: ${answer.totalEntries} entries, users ${[...new Set(answer.entries.map((entry) => entry.user_id))].join(',')}`);
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

if (process.argv[1] === import.meta.filename) {
  const options = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as ColdOptions;
  process.stdout.write(`${JSON.stringify(await runCold(options))}\n`);
}
