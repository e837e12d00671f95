import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { HgError } from '../lib/errors.ts';
import { HgRequest, type HgResponse } from './response.ts';

function tooLarge(maxBytes: number): HgError {
  return new HgError('HG_ERR_PAYLOAD_TOO_LARGE', { detail: `The request body is larger than ${maxBytes} bytes (server.maxBodyBytes).` });
}

/** How long a refused body may go on arriving (and be dropped) before its connection is cut: nginx's lingering_timeout. */
export const LINGER_MS = 5_000;

/** A connection's own linger, when its server was given one other than LINGER_MS. */
const LINGER = Symbol('hypergate.lingerMs');

type LingeringSocket = Socket & { [LINGER]?: number };

/**
 * Gives the connections `server` accepts a linger of `ms` instead of LINGER_MS (tests shorten it so
 * they need not wait 5 s for a connection to be cut). With the default nothing is added: no listener,
 * no work per connection.
 */
export function lingerOn(server: Server, ms: number): void {
  if (ms === LINGER_MS) return;
  server.on('connection', (socket: Socket) => {
    (socket as LingeringSocket)[LINGER] = ms;
  });
}

const drop = (): void => {};

/**
 * A write refused before its body was read whole (413, 401, 415, ...): the rest is read and
 * dropped as it arrives, never kept, so the client (which may still be sending) gets to read the
 * answer. Closing at once would make the kernel reset a connection with unread bytes, and a reset
 * can take the answer with it; nginx's lingering close does the same. A client still sending after
 * the linger is cut off; one that finishes keeps its connection.
 */
export function discardBody(req: IncomingMessage): void {
  if (req.complete || (req instanceof HgRequest && req.discardingBody)) return;
  if (req instanceof HgRequest) req.discardingBody = true;
  req.on('data', drop);
  req.resume();
  req.once('end', cutAfterLinger(req.socket));
}

/**
 * Closes the connection its linger (LINGER_MS unless lingerOn said otherwise) from now unless it
 * closes first; returns what cancels that. For
 * a connection whose last answer is written while the client may still be sending (a refused body,
 * a problem for bytes that could not be parsed): what it sends meanwhile is read and dropped.
 */
export function cutAfterLinger(socket: Socket): () => void {
  const cut = setTimeout(() => socket.destroy(), (socket as LingeringSocket)[LINGER] ?? LINGER_MS).unref();
  const onClose = (): void => clearTimeout(cut);
  socket.once('close', onClose);
  // Cancelled while the connection stays (a refused body read to its end on a kept-alive
  // connection): its 'close' listener goes too, else each such request would leave one behind.
  return () => {
    clearTimeout(cut);
    socket.off('close', onClose);
  };
}

/** On a request whose answer went out before its body was read whole (client-error.ts: a 408 mid-body). */
const ANSWERED_EARLY = Symbol('hypergate.answeredEarly');

type MaybeAnsweredEarly = IncomingMessage & { [ANSWERED_EARLY]?: true };

/**
 * The request was answered (a problem) before its body was read whole: what its body brings is
 * never acted on. Without this, a write told 408 mid-body would still reach the upstream once the
 * rest of its body arrived, with nobody to tell.
 */
export function markAnsweredEarly(req: IncomingMessage): void {
  (req as MaybeAnsweredEarly)[ANSWERED_EARLY] = true;
}

function answeredEarly(req: IncomingMessage): boolean {
  return (req as MaybeAnsweredEarly)[ANSWERED_EARLY] === true;
}

/**
 * Reads a request body of at most `maxBytes`. A Content-Length over the bound is refused before a
 * byte is read; a body that grows past it while streaming is refused at once. Either way nothing
 * more of it is kept (discardBody). "Expect: 100-continue" is answered with 100 only here, once
 * every check before the body has passed (RFC 9110 section 10.1.1).
 */
export function readBody(req: IncomingMessage, res: HgResponse, maxBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.reject(tooLarge(maxBytes));
  if (req.headers.expect?.toLowerCase() === '100-continue') res.writeContinue();
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      if (answeredEarly(req)) {
        chunks.length = 0;
        return;
      }
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        chunks.length = 0;
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      if (answeredEarly(req))
        reject(new HgError('HG_ERR_REQUEST_TIMEOUT', { detail: 'The request was answered before its body arrived; it was not acted on.' }));
      else resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(new HgError('HG_ERR_BAD_REQUEST', { detail: 'The request body was cut off.', cause: err }));
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
