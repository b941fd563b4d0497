/**
 * What the service's main thread went through over a phase of the benchmark, from its own
 * /metrics (prom-client's default metrics, prefixed `acds_`): the longest event-loop delay (the
 * histogram behind it is reset each time /metrics is read, so reading it before a phase starts
 * the window) and the garbage collector's pauses by kind. A probe's tail that matches the longest
 * delay was spent waiting for the main thread; one that does not, elsewhere.
 */

export interface MainThreadReport {
  /** The longest event-loop delay, in ms (prom-client samples every 10 ms). */
  longestDelayMs: number;
  /** Per kind of collection (major, minor, incremental, weakcb): how many, their total and those over 10 ms. */
  gc: { kind: string; pauses: number; totalMs: number; over10Ms: number }[];
}

/** `name{labels}` → value, for every sample of a Prometheus text exposition. */
export function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const split = line.lastIndexOf(' ');
    samples.set(line.slice(0, split), Number(line.slice(split + 1)));
  }
  return samples;
}

async function readMetrics(baseUrl: string): Promise<Map<string, number>> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return parseMetrics(await response.text());
}

/** Reads /metrics now (which starts a new event-loop delay window); the function returned reads it again and reports the phase between. */
export async function watchMainThread(baseUrl: string): Promise<() => Promise<MainThreadReport>> {
  const before = await readMetrics(baseUrl);
  return async () => mainThreadBetween(before, await readMetrics(baseUrl));
}

export function mainThreadBetween(before: Map<string, number>, after: Map<string, number>): MainThreadReport {
  const grown = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  const kinds = [...after.keys()].flatMap((name) => /^acds_nodejs_gc_duration_seconds_count\{kind="(\w+)"\}$/.exec(name)?.[1] ?? []);
  return {
    longestDelayMs: (after.get('acds_nodejs_eventloop_lag_max_seconds') ?? 0) * 1000,
    gc: kinds.map((kind) => {
      const pauses = grown(`acds_nodejs_gc_duration_seconds_count{kind="${kind}"}`);
      return {
        kind,
        pauses,
        totalMs: grown(`acds_nodejs_gc_duration_seconds_sum{kind="${kind}"}`) * 1000,
        over10Ms: pauses - grown(`acds_nodejs_gc_duration_seconds_bucket{le="0.01",kind="${kind}"}`),
      };
    }),
  };
}

export function describeMainThread(report: MainThreadReport): string {
  const gc = report.gc
    .filter((kind) => kind.pauses > 0)
    .map((kind) => `${kind.pauses} ${kind.kind} (${kind.totalMs.toFixed(0)} ms, ${kind.over10Ms} over 10 ms)`);
  return `longest event-loop delay ${report.longestDelayMs.toFixed(1)} ms; GC pauses: ${gc.join(', ') || 'none'}`;
}
