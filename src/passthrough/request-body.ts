import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { discardBody } from '../protocol/body.ts';
import { HgError } from '../lib/errors.ts';

/** The 413 for a body past a route's limit. */
export function bodyTooLarge(maxBytes: number, key: string): HgError {
  return new HgError('HG_ERR_PAYLOAD_TOO_LARGE', { detail: `The request body is larger than ${maxBytes} bytes (${key}).` });
}

/**
 * A request body on its way to the upstream, read as the upstream takes it (the client is paused
 * while undici's socket is full) and never held whole. Past `maxBytes` it fails with the 413,
 * which aborts the upstream request, and the rest of the client's body is read and dropped
 * (discardBody) so the client can read the answer. `onProgress` hears of every chunk: bytes
 * arriving are progress towards the upstream's answer.
 */
export class RequestBody extends Readable {
  readonly #req: IncomingMessage;
  readonly #maxBytes: number;
  readonly #tooLarge: () => HgError;
  readonly #onProgress: () => void;
  #size = 0;

  constructor(req: IncomingMessage, maxBytes: number, tooLarge: () => HgError, onProgress: () => void) {
    super();
    this.#req = req;
    this.#maxBytes = maxBytes;
    this.#tooLarge = tooLarge;
    this.#onProgress = onProgress;
    req.on('data', this.#onData);
    req.once('end', this.#onEnd);
    req.once('error', this.#onError);
    req.pause();
  }

  /** Bytes read from the client so far. */
  get size(): number {
    return this.#size;
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#size += chunk.length;
    if (this.#size > this.#maxBytes) {
      this.#detach();
      discardBody(this.#req);
      this.destroy(this.#tooLarge());
      return;
    }
    this.#onProgress();
    if (!this.push(chunk)) this.#req.pause();
  };

  readonly #onEnd = (): void => {
    this.#detach();
    this.push(null);
  };

  readonly #onError = (err: Error): void => {
    this.#detach();
    this.destroy(new HgError('HG_ERR_BAD_REQUEST', { detail: 'The request body was cut off.', cause: err }));
  };

  override _read(): void {
    this.#req.resume();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.#detach();
    callback(err);
  }

  #detach(): void {
    this.#req.off('data', this.#onData);
    this.#req.off('end', this.#onEnd);
    this.#req.off('error', this.#onError);
  }
}
