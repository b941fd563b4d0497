/**
 * What every benchmark does around the service it measures: the conversions it imports, a
 * PostgreSQL database of its own, the service built, started (pinned to a core) and stopped as a
 * real process, its memory read from /proc, and percentiles of latencies.
 */
import { randomBytes } from 'node:crypto';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { seededRandom, syntheticConversions } from '../src/conversions/synthetic.js';
import { childProcessesOf } from '../test/helpers/processes.js';

/**
 * Writes `count` synthetic conversions (the seeder's generator, from `seed`) to `file` as NDJSON,
 * one a line; `each` sees every record, with its index, as it is written.
 */
export function writeConversions(file: string, count: number, seed: number, each?: (record: Record<string, unknown>, index: number) => void): void {
  const fd = fs.openSync(file, 'w');
  try {
    let lines: string[] = [];
    let index = 0;
    for (const record of syntheticConversions(count, { random: seededRandom(seed) })) {
      each?.(record, index++);
      lines.push(JSON.stringify(record));
      if (lines.length === 10_000) {
        fs.writeSync(fd, `${lines.join('\n')}\n`);
        lines = [];
      }
    }
    if (lines.length > 0) fs.writeSync(fd, `${lines.join('\n')}\n`);
  } finally {
    fs.closeSync(fd);
  }
}

/** Compiles the service of `cwd` into its dist/ (npm run build), as `npm start` does. */
export function build(cwd: string): void {
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd, encoding: 'utf8' });
  if (built.status !== 0) throw new BenchFailure(`npm run build in ${cwd} failed:\n${built.stdout}${built.stderr}`);
}

async function adminQuery(serverUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A new, empty database on the server of `serverUrl`; `drop` removes it again. */
export async function freshPostgres(serverUrl: string, prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`) };
}

/** Resolves with the address a service (or the bare server) prints once it listens. */
export function listeningAddress(child: ChildProcess, what: string): Promise<string> {
  let output = '';
  return new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it listened:\n${output}`)));
  });
}

/** SIGTERM, then SIGKILL if the process has not exited after `graceMs`. */
export async function stop(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * VmRSS (now) or VmHWM (the peak since it started) of a process and the processes it started
 * (the service's columnar index runs in one), summed, in MiB. Summed peaks may not have come at
 * the same moment: their sum is at least the tree's real peak.
 */
export function memoryMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  const own = processMemoryMiB(pid, field);
  if (own === undefined) return undefined;
  return childProcessesOf(pid).reduce((sum, child) => sum + (memoryMiB(child, field) ?? 0), own);
}

/** A process's own memory (VmRSS) or its peak (VmHWM), in MiB, without the processes it started. */
export function processMemoryMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined; // no /proc (not Linux), or the process is gone
  }
}

// The unit of a thread's times in /proc/<pid>/task/<tid>/stat: USER_HZ, 100 on Linux.
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * The processor time (user and system) each thread of a process, and of the processes it
 * started, has used so far, in seconds, by "pid/tid". Two readings give a stretch's split of the
 * core (cpuSplit).
 */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const seconds = new Map<string, number>();
  const read = (processId: number) => {
    try {
      for (const thread of fs.readdirSync(`/proc/${processId}/task`)) {
        const stat = fs.readFileSync(`/proc/${processId}/task/${thread}/stat`, 'utf8');
        // The fields after the command's name, which may hold spaces: utime and stime are the 12th and 13th.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        seconds.set(`${processId}/${thread}`, (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND);
      }
    } catch {
      return; // no /proc (not Linux), or the process is gone
    }
    for (const child of childProcessesOf(processId)) read(child);
  };
  read(pid);
  return seconds;
}

/** How the processor time between two readings of threadCpuSeconds(pid) was split: pid's main thread, its other threads, the processes it started. */
export function cpuSplit(pid: number, before: Map<string, number>, after: Map<string, number>): { mainThread: number; otherThreads: number; children: number } {
  const split = { mainThread: 0, otherThreads: 0, children: 0 };
  for (const [thread, seconds] of after) {
    const used = seconds - (before.get(thread) ?? 0);
    const [processId, threadId] = thread.split('/').map(Number);
    if (processId !== pid) split.children += used;
    else if (threadId === pid) split.mainThread += used;
    else split.otherThreads += used;
  }
  return split;
}

/** A failure the benchmark explains itself: printed without a stack. */
export class BenchFailure extends Error {}

// A service on core 0 and its load on core 1, where taskset exists and there are two cores;
// otherwise they share the machine (and the benchmarks say so).
export const canPin = os.availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/**
 * The node flags of the benchmark's own clients (the load generator, the cold questions' client
 * with its probe, the notifications' sender), each pinned to one core: as the service does, each
 * thread collects its own garbage, so that V8's helper threads taking turns on the client's core
 * do not add to the latencies it measures (docs/performance.md, session 35).
 */
export const CLIENT_NODE_FLAGS = ['--single-threaded-gc'];

/** Every process the benchmark has started and that still runs (for Ctrl-C). */
export const children = new Set<ChildProcess>();

/**
 * Starts a Node script pinned to `core` (undefined: not pinned): compiled JavaScript as `npm start`
 * runs it, TypeScript (the benchmark's own scripts) through tsx. Its standard output is piped, its
 * errors inherited.
 */
export function startPinned(
  core: number | undefined,
  script: string,
  scriptArgs: string[],
  { cwd, env = process.env, nodeFlags = [] }: { cwd: string; env?: NodeJS.ProcessEnv; nodeFlags?: string[] },
): ChildProcess {
  const nodeArgs = [...nodeFlags, ...(script.endsWith('.ts') ? ['--import', 'tsx', script] : [script]), ...scriptArgs];
  const [command, commandArgs] = canPin && core !== undefined ? ['taskset', ['-c', String(core), process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  const child = spawn(command, commandArgs, { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Runs a script (startPinned) to its end; resolves with its standard output, rejects when it fails. */
export async function runPinned(
  core: number | undefined,
  script: string,
  scriptArgs: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; nodeFlags?: string[] },
): Promise<string> {
  const child = startPinned(core, script, scriptArgs, options);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new BenchFailure(`${script} ${scriptArgs.join(' ')} exited with ${code}:\n${output}`);
  return output;
}

export interface Latencies {
  n: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Nearest-rank percentiles of a list of latencies in ms (NaN for none). */
export function latencies(ms: number[]): Latencies {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
  return { n: sorted.length, p50Ms: at(50), p90Ms: at(90), p99Ms: at(99), maxMs: sorted.at(-1) ?? NaN };
}
