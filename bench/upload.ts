/**
 * Streams one large file to POST /api/v1/assets as multipart/form-data, generated as it is
 * sent (the benchmark never holds it), for measuring the server's memory while it takes it.
 */
import { once } from 'node:events';
import http from 'node:http';

const BOUNDARY = 'acds-bench-upload';
const CHUNK = Buffer.alloc(1024 * 1024, 7);

export async function uploadFile(baseUrl: string, apiKey: string, name: string, size: number): Promise<{ status: number; body: string }> {
  const request = http.request(`${baseUrl}/api/v1/assets`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.once('response', (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.once('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.once('error', reject);
  });
  request.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${name}\r\n`);
  request.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  for (let sent = 0; sent < size; sent += CHUNK.length) {
    if (!request.write(CHUNK.subarray(0, Math.min(CHUNK.length, size - sent)))) await once(request, 'drain');
  }
  request.end(`\r\n--${BOUNDARY}--\r\n`);
  return answer;
}
