/**
 * The flags of the node process that runs the service: `npm start`, the Dockerfile and the
 * benchmarks start it with them, and `serve` says so when they are missing.
 *
 * V8 shrinks an idle process's heap, and then, under the load that follows, lets its old space
 * grow so slowly that it collects garbage again and again (a full collection every 60-100 ms,
 * with marking steps of 12-21 ms on the event loop): measured after the index was built, cached
 * list pages went from some 3,000 answers a second to 1,100-1,500, their p99 from 6 to 45 ms
 * (docs/performance.md). An old space of at least 96 MiB keeps it from shrinking that far.
 *
 * V8 also marks and compacts on helper threads of its own (four, whatever the processor count)
 * beside the thread they collect for. On a service given one core, those helpers take turns on
 * it with the event loop and the SQLite threads: a collection of a few milliseconds' work held
 * requests for 20-60 ms while they ran (docs/performance.md). With `--single-threaded-gc` each
 * thread collects its own garbage in small incremental steps; collecting is some 2% of the
 * event loop's time, so on more cores the helpers would save little. What it costs: marking on
 * one thread catches up more slowly, so a PostgreSQL export, whose rows arrive as strings, grows
 * the heap some 60 MiB further.
 */
export const SERVICE_NODE_FLAGS = ['--initial-old-space-size=96', '--single-threaded-gc'];

/** The flags of SERVICE_NODE_FLAGS this process was started without. */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return SERVICE_NODE_FLAGS.filter((flag) => !execArgv.includes(flag));
}
