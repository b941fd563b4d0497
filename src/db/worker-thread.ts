import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Starts the worker module `name` (without extension) beside `callerUrl` (the caller's
 * import.meta.url). Built, the worker is JavaScript; under tsx (tests, `npm run cli`) it is
 * TypeScript, and a worker thread does not inherit tsx's loader: it registers it first.
 */
export function startWorker(callerUrl: string, name: string, workerData: unknown): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), { workerData });
  const source = JSON.stringify(new URL(`./${name}.ts`, callerUrl).href);
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${source}); })`, { eval: true, workerData });
}

/**
 * Adds `niceness` to the calling thread's nice value, so that its work yields the processor to
 * the rest of the service; threads it starts afterwards inherit it. On Linux a thread has its own
 * nice value, set through its thread id; elsewhere this does nothing.
 */
export function lowerThisThreadsPriority(niceness: number): void {
  if (niceness <= 0) return;
  try {
    const threadId = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    os.setPriority(threadId, Math.min(19, os.getPriority(threadId) + niceness));
  } catch {
    // No /proc/thread-self (not Linux) or not allowed: the thread runs at the process's priority.
  }
}
