import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeMainThread, mainThreadBetween, parseMetrics } from '../../bench/main-thread.js';

// As prom-client writes them: the bucket's `le` first, then the metric's own labels.
const exposition = (
  major: { count: number; sum: number; under10Ms: number },
  lagMaxSeconds: number,
) => `# HELP acds_nodejs_eventloop_lag_max_seconds The maximum recorded event loop delay.
# TYPE acds_nodejs_eventloop_lag_max_seconds gauge
acds_nodejs_eventloop_lag_max_seconds ${lagMaxSeconds}
# TYPE acds_nodejs_gc_duration_seconds histogram
acds_nodejs_gc_duration_seconds_bucket{le="0.001",kind="major"} 0
acds_nodejs_gc_duration_seconds_bucket{le="0.01",kind="major"} ${major.under10Ms}
acds_nodejs_gc_duration_seconds_bucket{le="+Inf",kind="major"} ${major.count}
acds_nodejs_gc_duration_seconds_sum{kind="major"} ${major.sum}
acds_nodejs_gc_duration_seconds_count{kind="major"} ${major.count}
acds_nodejs_gc_duration_seconds_bucket{le="0.01",kind="minor"} 40
acds_nodejs_gc_duration_seconds_sum{kind="minor"} 0.08
acds_nodejs_gc_duration_seconds_count{kind="minor"} 40
`;

describe("the benchmark's report of the service's main thread", () => {
  test('parses every sample by its name and labels, and skips comments', () => {
    const samples = parseMetrics(exposition({ count: 3, sum: 0.05, under10Ms: 2 }, 0.012));
    assert.equal(samples.get('acds_nodejs_eventloop_lag_max_seconds'), 0.012);
    assert.equal(samples.get('acds_nodejs_gc_duration_seconds_bucket{le="+Inf",kind="major"}'), 3);
    assert.equal(samples.size, 9);
  });

  test('counts the pauses between two readings, those over 10 ms, and the longest delay of the second', () => {
    const before = parseMetrics(exposition({ count: 3, sum: 0.05, under10Ms: 2 }, 0.5));
    const after = parseMetrics(exposition({ count: 7, sum: 0.25, under10Ms: 4 }, 0.0456));
    const report = mainThreadBetween(before, after);
    assert.equal(report.longestDelayMs.toFixed(1), '45.6');
    const major = report.gc.find((kind) => kind.kind === 'major')!;
    assert.deepEqual({ ...major, totalMs: Math.round(major.totalMs) }, { kind: 'major', pauses: 4, totalMs: 200, over10Ms: 2 });
    assert.deepEqual(
      report.gc.find((kind) => kind.kind === 'minor'),
      { kind: 'minor', pauses: 0, totalMs: 0, over10Ms: 0 },
    );
    assert.equal(describeMainThread(report), 'longest event-loop delay 45.6 ms; GC pauses: 4 major (200 ms, 2 over 10 ms)');
  });
});
