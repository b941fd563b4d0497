import assert from 'node:assert/strict';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { describeEachEngine, freshDatabase, type TestDatabase } from '../helpers/database.js';
import { spawnService, stopService, type ServiceProcess } from '../helpers/processes.js';

/**
 * Requests refused before any route sees them, by Node's HTTP parser or by Fastify's router, are
 * answered as every other error is: a JSON string saying what to fix, JSON with its charset, and
 * an X-Request-Id that finds the refusal's line in the log. They are sent over a raw socket to
 * the real service, since `inject` never goes through Node's parser.
 */

const JSON_TYPE = 'application/json; charset=utf-8';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LONG = 'a'.repeat(100_000);

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the service sent on the connection. */
  raw: string;
}

/** Sends bytes on a new connection and reads what comes back until the service closes it. */
function sendRaw(port: number, request: Buffer | string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    // The service may close while a long request is still being written: what it answered counts.
    socket.on('error', () => {});
    socket.setTimeout(5000, () => socket.destroy(new Error('the service did not close the connection')));
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]);
      if (!status) return reject(new Error(`no HTTP answer: ${JSON.stringify(raw.slice(0, 200))}`));
      const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status, headers, body: rest.join('\r\n\r\n'), raw });
    });
    socket.write(request);
  });
}

const request = (requestLine: string | Buffer, headers = 'Host: acds.test\r\n') =>
  Buffer.concat([Buffer.from(requestLine), Buffer.from(`\r\n${headers}Connection: close\r\n\r\n`)]);

const REFUSALS: { why: string; bytes: Buffer; status: number; says: RegExp }[] = [
  {
    why: 'raw UTF-8 bytes in the path',
    bytes: request(Buffer.concat([Buffer.from('GET /api/v1/assets/caf'), Buffer.from('é', 'utf8'), Buffer.from(' HTTP/1.1')])),
    status: 400,
    says: /percent-encode/,
  },
  { why: 'a NUL in the path', bytes: request(Buffer.from('GET /api/v1/a\0b HTTP/1.1')), status: 400, says: /percent-encode/ },
  { why: 'a 100 KB URL', bytes: request(`GET /api/v1/${LONG} HTTP/1.1`), status: 431, says: /URL and headers/ },
  { why: 'a 100 KB header', bytes: request('GET /api/v1/conversions HTTP/1.1', `Host: acds.test\r\nX-Big: ${LONG}\r\n`), status: 431, says: /URL and headers/ },
  {
    why: '3,000 headers',
    bytes: request('GET /api/v1/conversions HTTP/1.1', `Host: acds.test\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v\r\n`).join('')}`),
    status: 431,
    says: /URL and headers/,
  },
  { why: 'a line that is not HTTP', bytes: request('HELLO'), status: 400, says: /method/ },
  { why: 'an unknown HTTP version', bytes: request('GET /healthz HTTP/9.9'), status: 400, says: /HTTP\/1\.1/ },
  { why: 'a control character in a header value', bytes: request('GET /healthz HTTP/1.1', 'Host: acds.test\r\nX-A: a\x01b\r\n'), status: 400, says: /header/ },
  { why: 'a space in a header name', bytes: request('GET /healthz HTTP/1.1', 'Host: acds.test\r\nX A: b\r\n'), status: 400, says: /header/ },
  {
    why: 'Content-Length beside Transfer-Encoding',
    bytes: request('POST /api/v1/assets HTTP/1.1', 'Host: acds.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n'),
    status: 400,
    says: /Content-Length/,
  },
  { why: 'an HTTP/1.1 request without Host', bytes: request('GET /healthz HTTP/1.1', ''), status: 400, says: /Host/ },
  { why: 'a malformed percent-encoding in an API path', bytes: request('GET /api/v1/assets/%zz HTTP/1.1'), status: 400, says: /percent-encoding/ },
  { why: 'a malformed percent-encoding in a public path', bytes: request('GET /public/%zz/abc HTTP/1.1'), status: 404, says: /no such public asset/ },
  { why: 'a 5,000-character public path', bytes: request(`GET /public/${'b'.repeat(5000)}/c HTTP/1.1`), status: 404, says: /no such public asset/ },
];

describeEachEngine('requests refused before routing', (engine) => {
  let database: TestDatabase;
  let service: ServiceProcess;
  let port: number;
  before(async () => {
    database = await freshDatabase(engine);
    service = await spawnService(database, { LOG_LEVEL: 'info' });
    port = Number(new URL(service.baseUrl).port);
  });
  after(async () => {
    if (service) await stopService(service);
    await database?.close();
  });

  /** The service's log lines that carry the request id, once they are written. */
  async function logLinesOf(requestId: string): Promise<string[]> {
    for (let waited = 0; waited < 3000; waited += 50) {
      const lines = service
        .output()
        .split('\n')
        .filter((line) => line.includes(requestId));
      if (lines.length > 0) return lines;
      await sleep(50);
    }
    return [];
  }

  for (const { why, bytes, status, says } of REFUSALS) {
    test(`${why}: ${status} with a JSON string saying what to fix, and an X-Request-Id found in a short log line`, async () => {
      const response = await sendRaw(port, bytes);
      assert.equal(response.status, status, response.raw.slice(0, 300));
      assert.equal(response.headers['content-type'], JSON_TYPE);
      const message: unknown = JSON.parse(response.body);
      assert.equal(typeof message, 'string', response.body);
      assert.match(message as string, says);
      assert.match(response.headers['x-request-id'] ?? '', UUID, 'X-Request-Id');
      const lines = await logLinesOf(response.headers['x-request-id']!);
      assert.ok(lines.length > 0, 'the log has the request id');
      for (const line of lines) {
        assert.ok(line.length < 1000, `a short log line, got ${line.length} characters: ${line.slice(0, 300)}`);
        assert.ok(!line.includes('a'.repeat(300)) && !line.includes('b'.repeat(300)), 'the log does not hold the whole URL or header');
      }
    });
  }

  test('an expectation other than 100-continue is ignored: the request is answered by the service', async () => {
    const response = await sendRaw(port, request('GET /healthz HTTP/1.1', 'Host: acds.test\r\nExpect: something-else\r\n'));
    assert.equal(response.status, 200, response.raw);
    assert.match(response.headers['x-request-id'] ?? '', UUID);
  });
});
