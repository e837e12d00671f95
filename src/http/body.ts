import type { IncomingMessage } from 'node:http';
import { HgError } from '../errors.ts';
import { HgRequest, type HgResponse } from './response.ts';

function tooLarge(maxBytes: number): HgError {
  return new HgError('HG_ERR_PAYLOAD_TOO_LARGE', { detail: `The request body is larger than ${maxBytes} bytes (server.maxBodyBytes).` });
}

/** How long a refused body may go on arriving (and be dropped) before its connection is cut: nginx's lingering_timeout. */
export const LINGER_MS = 5_000;

const drop = (): void => {};

/**
 * A write refused before its body was read whole (413, 401, 415, ...): the rest is read and
 * dropped as it arrives, never kept, so the client (which may still be sending) gets to read the
 * answer. Closing at once would make the kernel reset a connection with unread bytes, and a reset
 * can take the answer with it; nginx's lingering close does the same. A client still sending after
 * LINGER_MS is cut off; one that finishes keeps its connection.
 */
export function discardBody(req: IncomingMessage): void {
  if (req.complete || (req instanceof HgRequest && req.discardingBody)) return;
  if (req instanceof HgRequest) req.discardingBody = true;
  req.on('data', drop);
  req.resume();
  const socket = req.socket;
  const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  req.once('end', () => clearTimeout(cut));
  socket.once('close', () => clearTimeout(cut));
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
      resolve(Buffer.concat(chunks, size));
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
