import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { HgError, type HgErrorCode } from '../lib/errors.ts';
import { cutAfterLinger, markAnsweredEarly } from '../protocol/body.ts';
import { rawProblemResponse } from '../protocol/problem.ts';

/** Node's parser and timer errors, mapped to the problem a client should see. */
function codeFor(err: NodeJS.ErrnoException): HgErrorCode {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'HG_ERR_HEADERS_TOO_LARGE';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'HG_ERR_REQUEST_TIMEOUT';
    default:
      return 'HG_ERR_BAD_REQUEST';
  }
}

/** The answer node:http is writing to the connection now: the first of those still owed, in order. */
interface OwedAnswer {
  readonly headersSent: boolean;
  readonly req: IncomingMessage;
  once(event: 'close', listener: () => void): unknown;
}

/** Marks a connection whose problem answer is decided, so a parser error repeated by later bytes is not answered twice. */
const ANSWERING = Symbol('hypergate.answeringClientError');

type ClientSocket = Socket & { _httpMessage?: OwedAnswer | null; [ANSWERING]?: true };

/**
 * Answers requests Node could not parse (bad syntax, oversized head, slow head) with a problem
 * body instead of Node's bare status line, then closes the connection.
 *
 * Requests parsed before the bad bytes on a pipelined connection are owed their answers first,
 * in order (RFC 9112 section 9.3.2): a 400 written at once would be read as the answer to the
 * first of them, whose own answer would then be lost (or, after a cache hit, the 400 never sent).
 * So the problem waits until every answer before it is out. Only when the answer owed now is for
 * the very request the bad bytes belong to (its body is incomplete: a malformed chunk, a body that
 * never came in time) and nothing of it is written yet, is the problem that request's answer.
 */
export function handleClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  const client = socket as ClientSocket;
  if (err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  if (client[ANSWERING] === true) return;
  client[ANSWERING] = true;
  // The socket keeps being read (and what it brings refused again, unanswered here): a client
  // still writing must see its writes drain and the connection close after the problem.
  answerAfterOwed(client, rawProblemResponse(new HgError(codeFor(err))));
}

function answerAfterOwed(socket: ClientSocket, problem: Buffer): void {
  // The peer is gone, or the last answer closed the connection: nothing more can be said.
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const owed = socket._httpMessage;
  if (owed === undefined || owed === null || (!owed.headersSent && !owed.req.complete)) {
    // The problem is this request's answer: whatever of its body still comes is not acted on.
    if (owed !== undefined && owed !== null) markAnsweredEarly(owed.req);
    socket.end(problem);
    // Bytes keep coming from a client still writing (each a parser error, unanswered): the
    // connection is cut after the linger, as after a refused body, else it would stay open as long
    // as the client trickles, and for good if it never closes its side.
    cutAfterLinger(socket);
    return;
  }
  // 'close' comes after node:http has handed the connection to the next answer owed (or to none).
  owed.once('close', () => answerAfterOwed(socket, problem));
}

/**
 * The request's whole-request time-out (server.requestTimeoutMs) ran out before its body arrived:
 * answered as Node's own time-out is (clientError ERR_HTTP_REQUEST_TIMEOUT), a 408 after the answers
 * owed before it, and whatever of the body still comes is never acted on.
 */
export function answerRequestTimeout(socket: Socket): void {
  handleClientError(Object.assign(new Error('The request was not received in time.'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
}

/**
 * CONNECT (a tunnel request, RFC 9110 section 9.3.6): no route takes it. Without a listener Node
 * drops the socket without a word; this says 405 with the methods every route has.
 */
export function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => {});
  socket.end(rawProblemResponse(new HgError('HG_ERR_METHOD_NOT_ALLOWED', { detail: 'This gateway opens no tunnels.', headers: { Allow: 'GET, HEAD' } })));
}
