import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How long a connection may stay open after answering a request whose body had not all arrived. */
const LINGER_MS = 2000;

/**
 * Ends the connection of a request answered before its body has all arrived (an upload refused
 * part way), so that the client stops sending, without losing the answer. Node closes such a
 * socket the moment the answer is written: the bytes the client is still sending then meet a
 * closed socket, and the reset that follows can make the client's system drop the answer before
 * the client reads it. So the connection is half-closed after the answer instead, what still
 * arrives is read and dropped (never kept), and the socket is closed once the client closes its
 * side, or after LINGER_MS at most.
 */
export function closeAfterAnswer(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('connection', 'close');
  request.raw.unpipe();
  request.raw.resume();
  // Node calls this once the answer is written, on a response that closes its connection.
  const socket = request.raw.socket as Socket;
  socket.destroySoon = function lingerThenDestroy(this: Socket) {
    this.end();
    setTimeout(() => this.destroy(), LINGER_MS).unref();
  };
}
