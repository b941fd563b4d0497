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
