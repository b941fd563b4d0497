// The real service and command line in child processes, as an operator runs them, and what they printed.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { SERVICE_NODE_FLAGS } from '../../src/cli/node-flags.js';

/** The key of the account `default` in every service that spawnService starts (its BOOTSTRAP_API_KEY). */
export const SERVICE_KEY = `acds_${'k'.repeat(32)}`;
const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything the process printed on standard output so far. */
  output(): string;
}

/** The real service (`serve`) in a child process on a free port, on the given data; resolves once it listens. */
export async function spawnService(database: { dataDir: string; databaseUrl: string | undefined }, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, '--import', 'tsx', 'src/cli.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: database.dataDir,
      DATABASE_URL: database.databaseUrl ?? '',
      BOOTSTRAP_API_KEY: SERVICE_KEY,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => (output += chunk));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before it listened:\n${output}`)));
  });
  return { child, baseUrl, output: () => output };
}

/** Stops a spawned service (SIGKILL unless told otherwise) and resolves with its exit code once it is gone. */
export async function stopService(service: ServiceProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return service.child.exitCode;
  const exited = once(service.child, 'exit');
  service.child.kill(signal);
  const [code] = await exited;
  return code as number | null;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the command line (`src/cli.ts`) to its end with exactly `env`; killed after `timeoutMs`. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<CliRun> {
  return startCli(args, env, timeoutMs).done;
}

/** The command line started, with its process (to kill) and what it printed once it ends. */
export function startCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const done = new Promise<CliRun>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, done };
}

export function succeeded(run: CliRun): CliRun {
  assert.equal(run.code, 0, `exit status 0; stderr: ${run.stderr}; stdout: ${run.stdout}`);
  return run;
}

export function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1)!.trim();
}

/** The processes that process `pid` has started and that still run (Linux's /proc); none when it is gone. */
export function childProcessesOf(pid: number | 'self'): number[] {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((thread) => fs.readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
  } catch {
    return []; // gone meanwhile
  }
}
