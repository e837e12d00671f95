import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { HgError, type HgErrorCode } from '../errors.ts';
import { rawProblemResponse } from './problem.ts';

/** Node's parser and timer errors, mapped to the problem a client should see. */
function codeFor(err: NodeJS.ErrnoException): HgErrorCode {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW': return 'HG_ERR_HEADERS_TOO_LARGE';
    case 'ERR_HTTP_REQUEST_TIMEOUT': return 'HG_ERR_REQUEST_TIMEOUT';
    default: return 'HG_ERR_BAD_REQUEST';
  }
}

/**
 * Answers requests Node could not parse (bad syntax, oversized head, slow head) with a problem
 * body instead of Node's bare status line, then closes the connection.
 */
export function handleClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // Bytes of an answer already went out, or the peer is gone: nothing more can be said.
  const busy = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (err.code === 'ECONNRESET' || !socket.writable || busy) {
    socket.destroy();
    return;
  }
  socket.end(rawProblemResponse(new HgError(codeFor(err))));
}

/**
 * CONNECT (a tunnel request, RFC 9110 section 9.3.6): no route takes it. Without a listener Node
 * drops the socket without a word; this says 405 with the methods every route has.
 */
export function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => {});
  socket.end(rawProblemResponse(new HgError('HG_ERR_METHOD_NOT_ALLOWED', { detail: 'This gateway opens no tunnels.', headers: { Allow: 'GET, HEAD' } })));
}
