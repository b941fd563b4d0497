/**
 * `npm run bench:memory`: the service's memory under hostile uploads, which must stay at most
 * 300 MiB under floods of huge form fields and 100 trickling uploads. Not a test: it starts the real
 * service (compiled, as `npm start` runs it) on a fresh database, and on loopback only
 *
 *   - opens 100 trickling uploads, each sending a file one byte every two seconds, and holds them
 *     open for the whole run (each keeps a socket, a temporary file and a journal entry);
 *   - meanwhile sends rounds of 8 field floods at once, each a form of 20 unknown fields of
 *     15 MiB (300 MiB, generated as it is sent, chunked, so that no Content-Length gives it
 *     away), each flood sending until the service answers and closes the connection;
 *
 * samples the service's RSS, and prints its peak (VmHWM) against the target. Exits 1 when the
 * target is missed or an answer is not the one expected.
 *
 *   node --import tsx bench/memory.ts [--rounds 3] [--database postgres://user@host:5432/postgres]
 *
 * With --database, a fresh database is created on that server and dropped afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SERVICE_NODE_FLAGS } from '../src/cli/node-flags.js';
import { build, freshPostgres, listeningAddress, memoryMiB, stop } from './service.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const API_KEY = `acds_memory_${'m'.repeat(32)}`;
const MiB = 1024 * 1024;
const TARGET_MIB = 300;

const TRICKLES = 100;
const TRICKLE_EVERY_MS = 2000;
const FLOODS_AT_ONCE = 8;
const FLOOD_FIELDS = 20;
const FLOOD_FIELD_BYTES = 15 * MiB;
/** A flood that has no answer by then counts as a failure (the service read it whole, or hangs). */
const FLOOD_DEADLINE_MS = 60_000;
/** How long the trickles are held open after the last flood round, so that the peak is theirs too. */
const HOLD_AFTER_FLOODS_MS = 10_000;
const BOUNDARY = 'acds-memory-boundary';
const FILLER = Buffer.alloc(MiB, 'x');

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, database: { type: 'string' } } });
if (!/^\d+$/.test(args.rounds) || Number(args.rounds) < 1 || Number(args.rounds) > 20) throw new Error('--rounds must be a whole number from 1 to 20');
const rounds = Number(args.rounds);
const serverUrl = args.database;

const log = (line: string) => console.error(`[memory] ${line}`);

// ---------------------------------------------------------------------------------------------
// The service

async function startService(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; address: string }> {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, 'dist/cli.js', 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  return { child, address: await listeningAddress(child, 'the service') };
}

// ---------------------------------------------------------------------------------------------
// The clients

/** A POST /api/v1/assets on its own connection, its multipart body sent chunked as the caller writes it. */
function openUpload(address: string) {
  const { hostname, port } = new URL(address);
  const socket = net.connect(Number(port), hostname);
  socket.on('error', () => {}); // writes after the service closed the connection; its answer is what counts
  socket.write(
    [
      'POST /api/v1/assets HTTP/1.1',
      `Host: ${hostname}:${port}`,
      `X-API-Key: ${API_KEY}`,
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
      'Transfer-Encoding: chunked',
      '',
      '',
    ].join('\r\n'),
  );
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  /** Sends one chunk; resolves once the socket can take more, or at once when it is closed. */
  const send = async (bytes: string | Buffer): Promise<void> => {
    if (socket.destroyed || socket.writableEnded) return;
    socket.write(`${Buffer.byteLength(bytes).toString(16)}\r\n`);
    socket.write(bytes);
    if (!socket.write('\r\n')) {
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off('drain', done).off('close', done);
          resolve();
        };
        socket.on('drain', done).on('close', done);
      });
    }
  };
  return { socket, closed, send };
}

const partHead = (name: string, filename?: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n`;

interface Trickle {
  socket: net.Socket;
  stop(): void;
  closed: Promise<string>;
}

/** An upload that sends the start of a file, then one byte every TRICKLE_EVERY_MS until stopped. */
async function startTrickle(address: string, index: number): Promise<Trickle> {
  const upload = openUpload(address);
  await upload.send(`${partHead('name')}trickle-${index}.bin\r\n${partHead('file', `trickle-${index}.bin`)}`);
  const timer = setInterval(() => void upload.send('t'), TRICKLE_EVERY_MS);
  upload.closed.finally(() => clearInterval(timer));
  return { socket: upload.socket, closed: upload.closed, stop: () => clearInterval(timer) };
}

interface FloodResult {
  status: number | undefined;
  message: string;
  sentMiB: number;
}

/** A form of FLOOD_FIELDS unknown fields of FLOOD_FIELD_BYTES each, sent until the service closes the connection. */
async function flood(address: string, tag: string): Promise<FloodResult> {
  const upload = openUpload(address);
  let sent = 0;
  const deadline = Date.now() + FLOOD_DEADLINE_MS;
  sending: for (let field = 0; field < FLOOD_FIELDS; field++) {
    await upload.send(`${field === 0 ? '' : '\r\n'}${partHead(`${tag}${field}`)}`);
    for (let written = 0; written < FLOOD_FIELD_BYTES; written += FILLER.length) {
      if (upload.socket.destroyed || Date.now() > deadline) break sending;
      await upload.send(FILLER);
      sent += FILLER.length;
    }
  }
  if (!upload.socket.destroyed) await upload.send(`\r\n--${BOUNDARY}--\r\n`);
  const timer = setTimeout(() => upload.socket.destroy(), Math.max(0, deadline - Date.now()));
  const answer = await upload.closed;
  clearTimeout(timer);
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = /^HTTP\/1\.1 (\d+)/.exec(head)?.[1];
  return { status: status ? Number(status) : undefined, message: body, sentMiB: sent / MiB };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acds-memory-'));
  const dataDir = path.join(workDir, 'data');
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  let service: { child: ChildProcess; address: string } | undefined;
  const trickles: Trickle[] = [];
  try {
    if (serverUrl) ({ url: databaseUrl, drop: dropDatabase } = await freshPostgres(serverUrl, 'acds_memory'));
    build(ROOT);

    service = await startService({
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl ?? '',
      REDIS_URL: '',
      ...Object.fromEntries(
        ['S3_BUCKET', 'S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE'].map((name) => [name, '']),
      ),
      // Every other limit as it is by default: MAX_UPLOAD_BYTES, REQUEST_TIMEOUT_MS, IDLE_TIMEOUT_MS.
      MAX_UPLOAD_BYTES: '',
      REQUEST_TIMEOUT_MS: '',
      IDLE_TIMEOUT_MS: '',
      RATE_LIMIT_PER_MINUTE: '0',
      BOOTSTRAP_API_KEY: API_KEY,
      LOG_LEVEL: 'warn',
    });
    const pid = service.child.pid!;
    const engine = databaseUrl ? 'PostgreSQL' : 'SQLite';
    log(`${engine}, service ${service.address} (pid ${pid}), data in ${workDir}`);
    const restingMiB = memoryMiB(pid, 'VmRSS');

    let sampledPeak = 0;
    const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, memoryMiB(pid, 'VmRSS') ?? 0)), 50);

    for (let index = 0; index < TRICKLES; index++) trickles.push(await startTrickle(service.address, index));
    const began = performance.now();
    log(`${TRICKLES} trickling uploads open, one byte every ${TRICKLE_EVERY_MS / 1000} s each`);

    const floods: FloodResult[] = [];
    for (let round = 0; round < rounds; round++) {
      floods.push(...(await Promise.all(Array.from({ length: FLOODS_AT_ONCE }, () => flood(service!.address, 'unknown')))));
      log(`flood round ${round + 1} of ${rounds}: ${FLOODS_AT_ONCE} forms of ${FLOOD_FIELDS} fields of ${FLOOD_FIELD_BYTES / MiB} MiB answered`);
    }
    await new Promise((resolve) => setTimeout(resolve, HOLD_AFTER_FLOODS_MS));
    const heldSeconds = (performance.now() - began) / 1000;
    const stillOpen = trickles.filter((trickle) => !trickle.socket.destroyed).length;
    const stagedFiles = fs.readdirSync(path.join(dataDir, 'tmp')).length;
    clearInterval(sampler);
    const peakMiB = memoryMiB(pid, 'VmHWM');

    for (const trickle of trickles) trickle.socket.destroy();
    const refused = floods.filter((result) => result.status === 400 && /^"unknown field unknown0;/.test(result.message));
    const mostSent = Math.max(...floods.map((result) => result.sentMiB));
    const met = peakMiB !== undefined && peakMiB <= TARGET_MIB;

    console.log(`${engine}, Node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? '?'}`);
    console.log(`resting RSS ${restingMiB?.toFixed(0)} MiB`);
    console.log(
      `${TRICKLES} trickling uploads held open ${heldSeconds.toFixed(0)} s: ${stillOpen} still open at the end, ${stagedFiles} temporary files being written`,
    );
    console.log(
      `${floods.length} field floods (${rounds} rounds of ${FLOODS_AT_ONCE} at once, each ${FLOOD_FIELDS} x ${FLOOD_FIELD_BYTES / MiB} MiB): ` +
        `${refused.length} answered 400 naming the first field; the most any client had written before its answer: ${mostSent.toFixed(0)} MiB`,
    );
    console.log(
      `peak RSS ${peakMiB?.toFixed(0)} MiB (VmHWM; sampled every 50 ms: ${sampledPeak.toFixed(0)} MiB); target ≤ ${TARGET_MIB} MiB: ${met ? 'met' : 'NOT met'}`,
    );
    if (refused.length !== floods.length) {
      const other = floods.find((result) => !refused.includes(result));
      console.log(
        `unexpected flood answer: ${other?.status === undefined ? `none within ${FLOOD_DEADLINE_MS / 1000} s` : `${other.status} ${other.message.slice(0, 200)}`}`,
      );
    }
    return met && refused.length === floods.length && stillOpen === TRICKLES ? 0 : 1;
  } finally {
    for (const trickle of trickles) trickle.socket.destroy();
    if (service) await stop(service.child, 30_000);
    await dropDatabase();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
