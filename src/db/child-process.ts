import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/**
 * Starts the module `name` (without extension) beside `callerUrl` (the caller's import.meta.url)
 * as a child process that talks to this one by messages (structured clones, as a worker
 * thread's). Built, the module is JavaScript; under tsx (tests, `npm run cli`) it is TypeScript,
 * loaded through tsx. Its output is this process's, so that a crash it reports is seen.
 */
export function startChildProcess(callerUrl: string, name: string): ChildProcess {
  const typeScript = callerUrl.endsWith('.ts');
  const module = new URL(`./${name}.${typeScript ? 'ts' : 'js'}`, callerUrl);
  return fork(module, [], {
    // A profile asked of the service (bench:hooks --cpu-prof) is asked of its child too.
    execArgv: [...(typeScript ? ['--import', 'tsx'] : []), ...profilingFlags(process.execArgv)],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/**
 * The CPU profiling flags among a process's node flags, each with its value, whether written
 * `--cpu-prof-dir=DIR` or `--cpu-prof-dir DIR`.
 */
export function profilingFlags(execArgv: readonly string[]): string[] {
  const flags: string[] = [];
  execArgv.forEach((argument, index) => {
    if (!argument.startsWith('--cpu-prof')) return;
    flags.push(argument);
    const value = execArgv[index + 1];
    if (argument !== '--cpu-prof' && !argument.includes('=') && value !== undefined) flags.push(value);
  });
  return flags;
}

/**
 * Adds `niceness` to the nice value of every thread of this process, so that all of its work
 * (libuv's thread pool, where native modules run asynchronous work, included) yields the
 * processor to the process that started it. On Linux each thread has its own nice value and
 * threads started later inherit their starter's, so this is called first, before the work
 * begins. Elsewhere it lowers what the operating system lets it lower, or nothing.
 */
export function lowerThisProcessesPriority(niceness: number): void {
  if (niceness <= 0) return;
  let threads: number[];
  try {
    threads = fs.readdirSync('/proc/self/task').map(Number);
  } catch {
    threads = [0]; // no /proc (not Linux): the process as the operating system knows it
  }
  for (const thread of threads) {
    try {
      os.setPriority(thread, Math.min(19, os.getPriority(thread) + niceness));
    } catch {
      // Not allowed, or the thread has ended: it runs at its priority.
    }
  }
}
