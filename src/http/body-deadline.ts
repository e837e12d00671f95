import type { IncomingMessage, ServerResponse } from 'node:http';
import { msSinceRequestBegan } from '../lib/http-parser.ts';
import { answerRequestTimeout } from './client-error.ts';

/**
 * Holds server.requestTimeoutMs to the millisecond for a request whose body a write will read.
 * Node times a whole request from its first byte, but looks at its connections only once per
 * connectionsCheckingInterval (up to a second here, public-server.ts): a body completing in between
 * was taken, and written upstream, after the time-out. This timer fires at the deadline itself; a
 * body not complete by then gets Node's own 408 answer (client-error.ts), and what of it still
 * comes is never acted on (body.ts). Counted from the same first byte as Node's (its parser's
 * clock), so the two never disagree about which request is late. Armed only for requests that
 * carry a body to a route that reads one, and dropped when the answer is done.
 */
export function holdRequestDeadline(req: IncomingMessage, res: ServerResponse, requestTimeoutMs: number): void {
  if (requestTimeoutMs <= 0 || req.complete) return;
  const wait = Math.max(0, requestTimeoutMs - msSinceRequestBegan(req.socket));
  const timer = setTimeout(() => {
    if (!req.complete) answerRequestTimeout(req.socket);
  }, wait).unref();
  res.once('close', () => clearTimeout(timer));
}
