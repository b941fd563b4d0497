/**
 * The load generator, run by bench/run.ts as its own process (pinned to another core than the
 * server), so that generating load never competes with the server being measured.
 * Usage: node --import tsx bench/load.ts '<json LoadOptions>'; prints one JSON LoadResult line.
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  baseUrl: string;
  /** The scenario's family: every request picks one at random, so no single cached answer serves it. */
  paths: string[];
  connections: number;
  durationSeconds: number;
  headers: Record<string, string>;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  completed: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { paths } = options;
  const result = await autocannon({
    url: options.baseUrl,
    connections: options.connections,
    duration: options.durationSeconds,
    headers: options.headers,
    requests: [{ setupRequest: (request) => ({ ...request, path: paths[Math.floor(Math.random() * paths.length)]! }) }],
  });
  return {
    // Completed requests over the run's length, rather than the mean of per-second samples.
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    completed: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

if (process.argv[1] === import.meta.filename) {
  const options = JSON.parse(process.argv[2]!) as LoadOptions;
  process.stdout.write(`${JSON.stringify(await runLoad(options))}\n`);
}
