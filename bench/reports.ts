/**
 * Reports and export against a running service (bench/run.ts calls it after the cold questions):
 * summaries of everything by month and cart, each in a new time zone (the first counts the
 * buyers the others share); summaries of a quarter by day and source, each quarter new; and the
 * export of every conversion as NDJSON, read as fast as this process can, with the server's
 * memory sampled meanwhile. Answers are checked: a summary's total against the list's
 * totalEntries for the same filters, the export's line count against the conversions imported.
 */
import { seededRandom } from '../src/conversions/synthetic.js';
import { BenchFailure, memoryMiB } from './service.js';

export interface ReportsResult {
  quarterByDayAndSource: { asked: number; p50Ms: number; maxMs: number; example: string };
  everythingByMonthAndCart: { asked: number; firstMs: number; p50Ms: number; maxMs: number; example: string };
  export: { rows: number; seconds: number; rowsPerSecond: number; rssGrowthMiB: number | undefined };
}

const QUARTERS = 20;
const TIME_ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Tokyo', 'Australia/Sydney'];
const DAY_MS = 24 * 3600 * 1000;

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

export async function measureReports(baseUrl: string, apiKey: string, servicePid: number, conversions: number, seed: number): Promise<ReportsResult> {
  const ask = async (path: string) => {
    const began = performance.now();
    const response = await fetch(`${baseUrl}${path}`, { headers: { 'x-api-key': apiKey } });
    const body = await response.text();
    const ms = performance.now() - began;
    if (response.status !== 200) throw new BenchFailure(`${path} answered ${response.status}: ${body}`);
    return { ms, json: JSON.parse(body) };
  };

  // Asked first: the first summary of everything counts its distinct buyers, which the summaries
  // after it, of the same filters in any grouping, share.
  const everythingMs: number[] = [];
  for (const tz of TIME_ZONES) {
    const { ms, json } = await ask(`/api/v1/conversions/summary?group_by=month,cart_integration&tz=${tz}`);
    everythingMs.push(ms);
    if (json.totals.conversions !== conversions)
      throw new BenchFailure(`a summary of everything counted ${json.totals.conversions} of ${conversions} conversions`);
  }

  // The months the data spans, so that every quarter asked holds conversions.
  const months = (await ask('/api/v1/conversions/summary?group_by=month')).json.groups.map((group: { key: { month: string } }) => group.key.month);
  const first = Date.parse(`${months[0]}T00:00:00Z`);
  const last = Date.parse(`${months.at(-1)}T00:00:00Z`);
  const random = seededRandom(seed);

  const quarterMs: number[] = [];
  let quarterExample = '';
  for (let index = 0; index < QUARTERS; index++) {
    const start = new Date(first + Math.floor(random() * Math.max(1, (last - first) / DAY_MS - 90)) * DAY_MS + index * 1000);
    const from = start.toISOString().slice(0, 19);
    const to = new Date(start.getTime() + 90 * DAY_MS).toISOString().slice(0, 19);
    const filters = `created_at.between=${from}Z,${to}Z`;
    const path = `/api/v1/conversions/summary?group_by=day,utm_source&${filters}`;
    quarterExample ||= path;
    const { ms, json } = await ask(path);
    quarterMs.push(ms);
    if (index < 3) {
      const list = (await ask(`/api/v1/conversions?${filters}`)).json;
      if (json.totals.conversions !== list.totalEntries) {
        throw new BenchFailure(`${path} summed ${json.totals.conversions} conversions, the list has ${list.totalEntries}`);
      }
    }
  }

  const resting = memoryMiB(servicePid, 'VmRSS');
  let peak = resting;
  const sampler = setInterval(() => {
    const rss = memoryMiB(servicePid, 'VmRSS');
    if (rss !== undefined && (peak === undefined || rss > peak)) peak = rss;
  }, 100);
  const began = performance.now();
  // Uncompressed: fetch would ask for gzip by default, and the target is of the export itself.
  const response = await fetch(`${baseUrl}/api/v1/conversions/export`, { headers: { 'x-api-key': apiKey, 'accept-encoding': 'identity' } });
  if (response.status !== 200) throw new BenchFailure(`the export answered ${response.status}: ${await response.text()}`);
  let rows = 0;
  // Lines counted with indexOf: a loop over every byte kept the client's core nearly as busy as
  // the export took, so that the client, not the service, could have set the rate.
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) rows += 1;
  }
  const seconds = (performance.now() - began) / 1000;
  clearInterval(sampler);
  if (rows !== conversions) throw new BenchFailure(`the export sent ${rows} of ${conversions} conversions`);

  return {
    quarterByDayAndSource: { asked: QUARTERS, p50Ms: percentile(quarterMs, 0.5), maxMs: Math.max(...quarterMs), example: quarterExample },
    everythingByMonthAndCart: {
      asked: TIME_ZONES.length,
      firstMs: everythingMs[0]!,
      p50Ms: percentile(everythingMs, 0.5),
      maxMs: Math.max(...everythingMs),
      example: '/api/v1/conversions/summary?group_by=month,cart_integration&tz=America/New_York',
    },
    export: { rows, seconds, rowsPerSecond: rows / seconds, rssGrowthMiB: peak !== undefined && resting !== undefined ? peak - resting : undefined },
  };
}
