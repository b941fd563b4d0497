import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { JSON_CONTENT_TYPE } from './reply.js';

/** How long Node waits for a request's headers, and for the whole request. */
export interface Deadlines {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/**
 * Answers what Node refuses before any route sees it (a request that took too long to arrive,
 * headers too large, bytes that are not HTTP) as every other error is answered: a JSON string
 * saying what went wrong, where Fastify's own answer is an object. The connection is closed
 * after it, as after Node's own answer, since what follows on it cannot be read as a request.
 */
export function answerClientError(deadlines: Deadlines) {
  return function (this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // No request exists yet to carry an id: the answer gets one of its own, and the log line
    // names it with the parser's code, not the bytes, which may be 16 KiB of URL or a key.
    const requestId = randomUUID();
    this.log.info({ reqId: requestId, code: error.code, reason: (error as { reason?: string }).reason }, 'request refused by the HTTP parser');
    // A response already started on this connection must not be broken into by a second one.
    const started = (socket as Socket & { _httpMessage?: { headersSent: boolean } })._httpMessage?.headersSent === true;
    if (socket.writable && !started) {
      const [status, message] = refusal(error, deadlines);
      const body = JSON.stringify(message);
      socket.write(
        `HTTP/1.1 ${status}\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}

function refusal(error: NodeJS.ErrnoException, deadlines: Deadlines): [string, string] {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return ['408 Request Timeout', `the request took too long to arrive: ${describeDeadlines(deadlines)}`];
    case 'HPE_HEADER_OVERFLOW':
      return [
        '431 Request Header Fields Too Large',
        `the URL and headers together are larger than the ${http.maxHeaderSize / 1024} KiB the service reads: send a shorter URL or fewer headers`,
      ];
    default:
      return ['400 Bad Request', PARSER_PROBLEMS[error.code ?? ''] ?? 'the request is not valid HTTP/1.1: check its request line and headers'];
  }
}

/** What to fix, for the HTTP parser's errors that a client's own request causes. */
const PARSER_PROBLEMS: Record<string, string> = {
  HPE_INVALID_URL: 'the URL holds a character it cannot hold as it is: percent-encode spaces, control characters and characters outside ASCII',
  HPE_INVALID_METHOD: 'the request must start with an HTTP method such as GET',
  HPE_INVALID_VERSION: 'the request line must end with HTTP/1.1 or HTTP/1.0',
  HPE_INVALID_HEADER_TOKEN: 'a header name or value holds a character a header cannot hold, such as a space in a name or a control character',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length must be one whole number of bytes',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'send Content-Length or Transfer-Encoding: chunked, not both',
  HPE_INVALID_TRANSFER_ENCODING: 'send Content-Length or Transfer-Encoding: chunked, not both, and chunked last',
  HPE_INVALID_CHUNK_SIZE: 'a chunk of the chunked body does not start with its size in hexadecimal',
};

function describeDeadlines({ headersTimeoutMs, requestTimeoutMs }: Deadlines): string {
  const whole = `a request must arrive whole within ${requestTimeoutMs / 1000} seconds`;
  return headersTimeoutMs < requestTimeoutMs ? `${whole}, and its headers within ${headersTimeoutMs / 1000}` : whole;
}
