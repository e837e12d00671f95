import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { answerRequestTimeout } from './client-error.ts';

/** Node's HTTP parser of a connection, for the one method its public API lacks. */
interface TimedParser {
  /** Milliseconds since the message being parsed began (its first byte); 0 when none is. */
  duration?(): number;
}

/** performance.now() when the request's first byte was parsed; now when Node does not say. */
function firstByteAt(req: IncomingMessage): number {
  const now = performance.now();
  const parser = (req.socket as unknown as { parser?: TimedParser | null }).parser;
  return typeof parser?.duration === 'function' ? now - parser.duration() : now;
}

/**
 * Holds server.requestTimeoutMs to the millisecond for a request whose body a write will read.
 * Node times a whole request from its first byte, but looks at its connections only once per
 * connectionsCheckingInterval (up to a second here, public-server.ts): a body completing in between
 * was taken, and written upstream, after the time-out. This timer fires at the deadline itself; a
 * body not complete by then gets Node's own 408 answer (client-error.ts), and what of it still
 * comes is never acted on (body.ts). Measured from the same first byte as Node's (its parser's
 * clock), so the two never disagree about which request is late. Armed only for requests that
 * carry a body to a route that reads one, and dropped when the answer is done.
 */
export function holdRequestDeadline(req: IncomingMessage, res: ServerResponse, requestTimeoutMs: number): void {
  if (requestTimeoutMs <= 0 || req.complete) return;
  const wait = firstByteAt(req) + requestTimeoutMs - performance.now();
  const timer = setTimeout(() => {
    if (!req.complete) answerRequestTimeout(req.socket);
  }, Math.max(0, wait)).unref();
  res.once('close', () => clearTimeout(timer));
}
