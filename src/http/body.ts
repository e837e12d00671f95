import type { IncomingMessage } from 'node:http';
import { HgError } from '../errors.ts';
import type { HgResponse } from './response.ts';

function tooLarge(maxBytes: number): HgError {
  return new HgError('HG_ERR_PAYLOAD_TOO_LARGE', { detail: `The request body is larger than ${maxBytes} bytes (server.maxBodyBytes).` });
}

/**
 * Reads a request body of at most `maxBytes`. A Content-Length over the bound is refused before a
 * byte is read; a body that grows past it while streaming is refused at once, and the rest is never
 * read or buffered: the request stops being read and the connection closes after the 413 (its
 * remaining bytes can then never be taken for a next request). "Expect: 100-continue" is answered
 * with 100 only here, once every check before the body has passed (RFC 9110 section 10.1.1).
 */
export function readBody(req: IncomingMessage, res: HgResponse, maxBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    res.shouldKeepAlive = false;
    return Promise.reject(tooLarge(maxBytes));
  }
  if (req.headers.expect?.toLowerCase() === '100-continue') res.writeContinue();
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.pause();
        res.shouldKeepAlive = false;
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
