import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { HgError } from '../lib/errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Tracing } from '../observability/tracing.ts';

import { isSafeRequestId, RequestIds } from '../observability/request-id.ts';
import { clientAddressRule, type ClientAddressOf } from '../protocol/client-address.ts';
import { markBusy, markIdle } from './keep-alive.ts';
import type { CorsPolicy } from './cors.ts';
import { WRITE_BODY_TYPES } from '../lib/media-type.ts';
import { discardBody } from '../protocol/body.ts';
import { holdRequestDeadline } from './body-deadline.ts';
import { sendProblem } from '../protocol/problem.ts';
import { routableTarget } from './request-target.ts';
import { HgRequest, unendedStatus, type HgResponse } from '../protocol/response.ts';
import type { Router } from './router.ts';

const SLASH = 0x2f;

/** Answers of a connection queued behind another pipelined one, not yet given the connection. */
const QUEUED_ANSWERS = Symbol('hypergate.queuedAnswers');
type QueuingSocket = Socket & { [QUEUED_ANSWERS]?: Set<HgResponse> };
const BAD_HOST = 'An HTTP/1.1 request needs exactly one Host header, holding a host name or address and an optional port.';

/**
 * The bytes of a Host value's host (RFC 9110 section 7.2: `uri-host [ ":" port ]`): a reg-name or
 * IPv4 address of RFC 3986 section 3.2.2 (unreserved, pct-encoded, sub-delims), and inside an IP
 * literal's brackets ':' as well. The comma is left out: no DNS name has one, and a second Host
 * line arrives joined to the first with one. Anything else ("a b c", a raw non-ASCII name) is a 400
 * (RFC 9112 section 3.2: "a Host header field with an invalid field value").
 */
const NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$&'()*+;=";
const NAME_BYTE = byteTable(NAME_CHARS);
const IP_LITERAL_BYTE = byteTable(`${NAME_CHARS}:`);
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function byteTable(bytes: string): Uint8Array {
  const table = new Uint8Array(128);
  for (const c of bytes) table[c.charCodeAt(0)] = 1;
  return table;
}

/**
 * Is `host` a host and an optional port? A name (possibly empty: RFC 9112 section 3.2 has clients
 * send an empty Host for a target without authority) or a bracketed IP literal, then nothing or
 * ':' and digits only. One pass over the value, no allocation: it runs on every request.
 */
function isHostValue(host: string): boolean {
  const length = host.length;
  let i = 0;
  if (length > 0 && host.charCodeAt(0) === OPEN_BRACKET) {
    for (i = 1; i < length; i++) {
      const c = host.charCodeAt(i);
      if (c === CLOSE_BRACKET) break;
      if (c > 0x7f || IP_LITERAL_BYTE[c] === 0) return false;
    }
    // An unclosed or empty literal.
    if (i === length || i === 1) return false;
    i++;
  } else {
    for (; i < length; i++) {
      const c = host.charCodeAt(i);
      if (c === COLON) break;
      if (c > 0x7f || NAME_BYTE[c] === 0) return false;
    }
  }
  if (i === length) return true;
  if (host.charCodeAt(i) !== COLON) return false;
  for (i++; i < length; i++) {
    const c = host.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}
const BAD_VERSION = 'This gateway speaks HTTP/1.1 and HTTP/1.0; the request line names another version.';

export interface DispatchLimits {
  readonly maxUrlBytes: number;
  /** server.maxHeaderCount: header fields allowed in one request; over it: 431. */
  readonly maxHeaderCount: number;
  /** server.requestTimeoutMs, held exactly for a body a route reads (body-deadline.ts); absent or 0: Node's own check alone. */
  readonly requestTimeoutMs?: number;
}

/** Set once shutdown starts: answers then close their connection instead of keeping it alive. */
export interface DrainState {
  draining: boolean;
}

/** What the dispatcher reports each finished exchange to; absent in the simplest set-ups. */
export interface DispatchObservers {
  readonly metrics: Metrics;
  /** Write one access-log line per request (log.access). */
  readonly accessLog: boolean;
  readonly ids?: RequestIds;
  /** The client address the access log shows (server.trustProxy); the peer when absent. */
  readonly clientAddress?: ClientAddressOf;
  /** Makes a SERVER span per request (tracing.enabled); null or absent: no tracing work at all. */
  readonly tracing?: Tracing | null;
}

/**
 * The request listener: route, run the handler, and turn anything it throws into a problem
 * answer. A handler's sync result and its promise are handled apart so a cache hit never waits
 * for a microtask. Each request gets an id (the caller's X-Request-Id when it is safe) and is
 * counted and logged once, when its answer is written: at once for a sync answer, on 'close'
 * otherwise, through one listener function shared by all requests.
 */
export function createDispatcher(
  router: Router,
  logger: Logger,
  limits: DispatchLimits,
  cors: CorsPolicy | null = null,
  drainState: DrainState = { draining: false },
  observers?: DispatchObservers,
) {
  const metrics = observers?.metrics;
  const stats = metrics?.requests;
  const ids = observers?.ids ?? new RequestIds();
  const accessLog = observers?.accessLog === true ? (logger.accessLog ?? null) : null;
  const clientAddress = observers?.clientAddress ?? clientAddressRule([]);
  const tracing = observers?.tracing ?? null;

  function record(req: IncomingMessage, res: HgResponse): void {
    if (res.recorded) return;
    res.recorded = true;
    const endedAt = performance.now();
    markIdle(req.socket, endedAt);
    const ms = endedAt - res.startedAt;
    // 499: the client went away before an answer was written (nginx's convention), unless the
    // answer was one that never ends through end() (a WebSocket tunnel, a stream the upstream cut).
    const status = res.writableEnded ? res.statusCode : unendedStatus(res);
    if (metrics !== undefined) {
      metrics.inFlight--;
      stats?.observe(res.routeIndex, req.method, status, ms);
    }
    if (tracing !== null) {
      const trace = (req as HgRequest).trace;
      if (trace !== undefined) tracing.end(trace, stats?.routePattern(res.routeIndex) ?? '', status, res.cacheOutcome);
    }
    accessLog?.write(
      res.requestId,
      req.method,
      req.url ?? '/',
      status,
      res.bytes,
      ms,
      res.upstreamMs,
      res.cacheOutcome,
      (req as HgRequest).subject,
      clientAddress(req),
      req.headers['user-agent'],
      endedAt,
      res.embedStatus,
    );
  }

  function onClose(this: HgResponse): void {
    record(this.req, this);
  }

  // node:http emits 'close' on an answer when it is done or its connection closes, but an answer
  // queued behind another pipelined one has no connection yet: if the client closes first, that
  // answer never gets 'close' (node:http aborts the requests, not the answers it queued). Such an
  // answer is recorded when its connection closes instead (499 unless it had ended), else the
  // in-flight gauge would never come down and the access log would lose it.
  function onQueuedSocketClose(this: QueuingSocket): void {
    const queued = this[QUEUED_ANSWERS];
    if (queued === undefined) return;
    for (const res of queued) record(res.req, res);
    queued.clear();
  }

  function onAssigned(this: HgResponse): void {
    // Needed: typescript-eslint resolves `this.socket` differently from tsc here and calls it redundant.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
    (this.socket as QueuingSocket | null)?.[QUEUED_ANSWERS]?.delete(this);
  }

  /** Records the exchange once its answer is done; not on the hot path (a cache hit is answered at once). */
  function recordWhenDone(req: IncomingMessage, res: HgResponse): void {
    res.on('close', onClose);
    if (res.socket !== null) return;
    const socket = req.socket as QueuingSocket;
    let queued = socket[QUEUED_ANSWERS];
    if (queued === undefined) {
      queued = socket[QUEUED_ANSWERS] = new Set();
      socket.once('close', onQueuedSocketClose);
    }
    queued.add(res);
    res.once('socket', onAssigned);
  }

  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown): void => {
    const headOnly = req.method === 'HEAD';
    // A body not read to its end closes the connection: its bytes must never be parsed as a next
    // request, and reading them all could take long. A write's refused body is being dropped as
    // it arrives instead (body.ts discardBody), which keeps the answer readable.
    if (hasBody(req) && !req.complete && !(req instanceof HgRequest && req.discardingBody)) res.shouldKeepAlive = false;
    const reqId = (res as HgResponse).requestId;
    if (err instanceof HgError) {
      // detail says what went wrong (the upstream's status, the field a record lacks); cause is
      // the exception behind it, when there is one (a refused connection, a parse error). A refused
      // pipelined request is the client's doing, and one read can hold thousands: its access line says enough.
      if (err.status >= 500 && err.code !== 'HG_ERR_PIPELINE_TOO_DEEP') {
        const cause = err.cause === undefined ? undefined : causeText(err.cause);
        // err.log: what only the operator may see (the service's name, the upstream's own words).
        logger.error('request failed', {
          ...err.log,
          reqId,
          method: req.method,
          path: pathOf(req.url ?? '/'),
          status: err.status,
          code: err.code,
          detail: err.detail,
          cause,
        });
      }
      sendProblem(res, err, headOnly);
      return;
    }
    logger.error('unexpected error', { reqId, method: req.method, path: pathOf(req.url ?? '/'), status: 500, error: causeText(err) });
    sendProblem(res, new HgError('HG_ERR_INTERNAL'), headOnly);
  };

  // rawHeaders holds name and value side by side; Node keeps one pair more than the limit (see gateway/public-server.ts) so going over it shows.
  const maxRawHeaders = limits.maxHeaderCount * 2;

  return function dispatch(req: IncomingMessage, res: HgResponse): void {
    const tooDeep = markBusy(req.socket);
    const incomingId = req.headers['x-request-id'];
    res.requestId = typeof incomingId === 'string' && isSafeRequestId(incomingId) ? incomingId : ids.next();
    if (metrics !== undefined) metrics.inFlight++;
    if (tracing !== null) (req as HgRequest).trace = tracing.begin(req, clientAddress(req));
    let url = req.url ?? '/';
    // A busy keep-alive connection would otherwise carry new requests through the whole drain.
    if (drainState.draining) res.shouldKeepAlive = false;
    // Only writes read a body. Any other is never read: the connection closes after the answer, so
    // its bytes are never parsed as a next request and need not be read to the end to keep it alive.
    const body = hasBody(req);
    try {
      if (tooDeep) {
        res.shouldKeepAlive = false;
        throw new HgError('HG_ERR_PIPELINE_TOO_DEEP');
      }
      // llhttp takes any single-digit version ("HTTP/2.0") and a line without one (HTTP/0.9); only
      // 1.x is HTTP/1 (RFC 9112 section 2.3). A 400, not a 505: it is the client's fault, and a
      // gateway's 5xx rate is what its operator is paged on.
      if (req.httpVersionMajor !== 1) {
        res.shouldKeepAlive = false;
        throw new HgError('HG_ERR_BAD_REQUEST', { detail: BAD_VERSION });
      }
      if (url.length > limits.maxUrlBytes) throw new HgError('HG_ERR_URI_TOO_LONG');
      if (req.rawHeaders.length > maxRawHeaders)
        throw new HgError('HG_ERR_HEADERS_TOO_LARGE', { detail: `The request has more than ${limits.maxHeaderCount} header fields.` });
      const host = req.headers.host;
      // RFC 9112 section 3.2: an HTTP/1.1 request has exactly one Host with a valid value, else 400.
      if (host === undefined ? req.httpVersionMinor === 1 && req.httpVersionMajor === 1 : !isHostValue(host))
        throw new HgError('HG_ERR_BAD_REQUEST', { detail: BAD_HOST });
      // An origin-form target starts with '/'; any other (absolute-form, RFC 9112 section 3.2.2) is
      // made origin-form here, once, in req.url itself, so every later reader (routing, the page
      // query, the cache key, links.self, the access and error logs) sees the path and query the
      // same request in origin-form has. Nothing needs the raw form later: the authority selects
      // nothing (request-target.ts), and Host was checked just above, as RFC 9112 asks.
      if (url.charCodeAt(0) !== SLASH) url = req.url = routableTarget(url);
      const path = pathOf(url);
      if (cors !== null && cors.handle(req, res, router, path)) {
        record(req, res);
        return;
      }
      const entry = router.lookup(req.method ?? 'GET', path);
      if (entry === null && req.method === 'OPTIONS' && answerOptions(router, path, res)) {
        record(req, res);
        return;
      }
      // 404 and 405 come first: they say more than 413 about what is wrong with the request.
      if (entry === null) throw routeMiss(router, path, res);
      res.routeIndex = entry.routeIndex;
      if (body) {
        if (!entry.acceptsBody) throw new HgError('HG_ERR_PAYLOAD_TOO_LARGE');
        const codings = req.headers['transfer-encoding'];
        if (codings !== undefined && codings.trim() === '') throw emptyCodings(req);
        if (!isChunkedOnly(codings)) throw unsupportedCoding(req);
        holdRequestDeadline(req, res, limits.requestTimeoutMs ?? 0);
      }
      const pending = entry.handler(req, res, path);
      if (pending !== undefined) {
        recordWhenDone(req, res);
        pending.catch((err: unknown) => fail(req, res, err));
        return;
      }
    } catch (err) {
      fail(req, res, err);
    }
    if (res.writableEnded) record(req, res);
    else recordWhenDone(req, res);
  };
}

/**
 * True when the request carries a body (RFC 9112 section 6.3), that is a Transfer-Encoding of any kind or a
 * Content-Length above 0. llhttp has already refused a malformed Content-Length.
 */
function hasBody(req: IncomingMessage): boolean {
  const { headers } = req;
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && Number(length) > 0;
}

/**
 * No Transfer-Encoding, or `chunked` alone. Node unframes chunked and hands the rest of a coding
 * list over as it came: `gzip, chunked` would be read as the gzip bytes it is, checked as JSON and
 * sent on. llhttp has already refused a list whose last coding is not chunked (RFC 9112 section 6.3).
 */
function isChunkedOnly(codings: string | undefined): boolean {
  return codings === undefined || codings.trim().toLowerCase() === 'chunked';
}

/**
 * An empty Transfer-Encoding names no coding at all (RFC 9112 section 6.1 wants at least one): the
 * request is malformed, a 400, never taken for a coding the gateway does not know (found by the
 * request-path fuzzer). What body follows is read and dropped as after a 501.
 */
function emptyCodings(req: IncomingMessage): HgError {
  discardBody(req);
  return new HgError('HG_ERR_BAD_REQUEST', { detail: 'Transfer-Encoding names no transfer coding.' });
}

/**
 * RFC 9112 section 6.1: a transfer coding the server does not understand is a 501. Its chunks can
 * still be told apart (chunked is the last coding), so the body is read and dropped as it arrives,
 * as a refused write's is: the answer stays readable and the connection may go on.
 */
function unsupportedCoding(req: IncomingMessage): HgError {
  discardBody(req);
  return new HgError('HG_ERR_UNSUPPORTED_TRANSFER_CODING');
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * OPTIONS on a known path (RFC 9110 section 9.3.7): 204 with `Allow`, and what the writes there
 * take (`Accept-Post`, `Accept-Patch`, RFC 5789 section 3.1). No token is needed: it says only
 * which methods the path's template takes. False for an unknown path (then the router's 404).
 */
function answerOptions(router: Router, path: string, res: HgResponse): boolean {
  const allowed = router.allowedMethods(path);
  if (allowed.length === 0) return false;
  res.routeIndex = router.routeIndexAt(path);
  const headers: Record<string, string | number> = {
    Allow: allowed.join(', '),
    'Cache-Control': 'no-store',
    'Content-Length': 0,
    'X-Request-Id': res.requestId,
  };
  if (allowed.includes('POST')) headers['Accept-Post'] = WRITE_BODY_TYPES.POST;
  if (allowed.includes('PATCH')) headers['Accept-Patch'] = WRITE_BODY_TYPES.PATCH;
  res.writeHead(204, headers);
  res.end();
  return true;
}

function routeMiss(router: Router, path: string, res: HgResponse): HgError {
  const allowed = router.allowedMethods(path);
  if (allowed.length === 0) return new HgError('HG_ERR_ROUTE_NOT_FOUND');
  // A 405 is a request for a known resource: counted under its route pattern, not as unmatched.
  res.routeIndex = router.routeIndexAt(path);
  return new HgError('HG_ERR_METHOD_NOT_ALLOWED', { headers: { Allow: allowed.join(', ') } });
}

function causeText(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}
