import type { IncomingMessage, ServerResponse } from 'node:http';
import { HgError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { CorsPolicy } from './cors.ts';
import { sendProblem } from './problem.ts';
import type { Router } from './router.ts';

export interface DispatchLimits {
  readonly maxUrlBytes: number;
}

/** Set once shutdown starts: answers then close their connection instead of keeping it alive. */
export interface DrainState {
  draining: boolean;
}

/**
 * The request listener: route, run the handler, and turn anything it throws into a problem
 * answer. A handler's sync result and its promise are handled apart so a cache hit never waits
 * for a microtask.
 */
export function createDispatcher(
  router: Router,
  logger: Logger,
  limits: DispatchLimits,
  cors: CorsPolicy | null = null,
  drainState: DrainState = { draining: false },
) {
  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown): void => {
    const headOnly = req.method === 'HEAD';
    if (err instanceof HgError) {
      if (err.status >= 500) logger.error('request failed', { method: req.method, path: pathOf(req.url ?? '/'), code: err.code, cause: causeText(err.cause) });
      sendProblem(res, err, headOnly);
      return;
    }
    logger.error('unexpected error', { method: req.method, path: pathOf(req.url ?? '/'), error: causeText(err) });
    sendProblem(res, new HgError('HG_ERR_INTERNAL'), headOnly);
  };

  return function dispatch(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    // A busy keep-alive connection would otherwise carry new requests through the whole drain.
    if (drainState.draining) res.shouldKeepAlive = false;
    try {
      if (url.length > limits.maxUrlBytes) throw new HgError('HG_ERR_URI_TOO_LONG');
      const path = pathOf(url);
      if (cors !== null && cors.handle(req, res, router, path)) return;
      const handler = router.match(req.method ?? 'GET', path);
      if (handler === null) throw routeMiss(router, path);
      const pending = handler(req, res, path);
      if (pending !== undefined) pending.catch((err: unknown) => fail(req, res, err));
    } catch (err) {
      fail(req, res, err);
    }
  };
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function routeMiss(router: Router, path: string): HgError {
  const allowed = router.allowedMethods(path);
  if (allowed.length === 0) return new HgError('HG_ERR_ROUTE_NOT_FOUND');
  return new HgError('HG_ERR_METHOD_NOT_ALLOWED', { headers: { Allow: allowed.join(', ') } });
}

function causeText(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}
