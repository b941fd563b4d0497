/**
 * The yardstick: a bare node:http server that answers each URL of the families with the bytes
 * the real service sent for it, so that the ratio to it shows what the service itself costs
 * over HTTP, loopback and the load generator on this machine.
 * Usage: node --import tsx bench/bare-server.ts <bodies.json: {"/path?query": "body"}>; prints its URL.
 */
import fs from 'node:fs';
import http from 'node:http';

const bodies = new Map<string, Buffer>(
  Object.entries(JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as Record<string, string>).map(([path, body]) => [path, Buffer.from(body)]),
);

const server = http.createServer((request, response) => {
  const body = bodies.get(request.url ?? '');
  if (body === undefined) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length }).end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  console.log(`bare server listening on http://127.0.0.1:${address.port}`);
});
