import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import { PROBE } from '../lib/breaker.ts';
import { HgError } from '../lib/errors.ts';
import { setUnendedStatus, upgradeHeadOf, type HgResponse } from '../protocol/response.ts';
import type { UpstreamOutcome } from '../observability/metrics.ts';
import { badGateway } from '../upstream/answer.ts';
import { unavailable } from '../upstream/attempt.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import type { CompiledRoute } from './compile.ts';
import { forwardedRequestHeaders, returnedResponseHeaders } from './headers.ts';
import type { PassthroughService } from './pools.ts';
import { bodyTooLarge, RequestBody } from './request-body.ts';
import { switchingHead, tunnel, upstreamAccepted } from './websocket.ts';

/** Why a stream was cut after its status was sent, as the metrics name it. */
export type CutReason = 'upstream_lost' | 'upstream_idle';

/** What a relay reports to: upstream outcomes (as every upstream request), and streams cut after their head. */
export interface RelayObserver {
  upstreamResult(service: string, outcome: UpstreamOutcome, ms: number): void;
  passthroughCut(route: string, reason: CutReason): void;
}

/** One pass-through exchange: everything it needs besides the request and its answer. */
export interface RelayPlan {
  readonly route: CompiledRoute;
  readonly service: PassthroughService;
  /** The upstream path with the query, service base path included. */
  readonly path: string;
  readonly call: UpstreamCall;
  /** The WebSocket key when the request is an opening handshake to tunnel; null otherwise. */
  readonly websocketKey: string | null;
  readonly observer: RelayObserver;
  /** Where open tunnels are kept, so a shutdown can close them (node:http no longer counts them as its connections). */
  readonly tunnels: Set<Duplex>;
  /** The header that carries API keys (auth.apiKeys.header, lower-case), never passed on; null: none. */
  readonly keyHeader?: string | null;
}

class Aborted extends Error {
  constructor(why: string) {
    super(why);
    this.name = 'Aborted';
  }
}
const CLIENT_GONE = new Aborted('the client closed its connection');

/** Does the request carry a body (RFC 9112 section 6.3)? llhttp has refused malformed framing already. */
export function carriesBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
}

/**
 * One request passed through to the upstream and its answer streamed back, as an undici dispatch
 * handler: the request body goes as the upstream takes it, the answer's chunks are written as they
 * arrive (an event stream's events reach the client one by one) and the upstream is paused while
 * the client's socket is full, so neither body is ever held whole.
 *
 * Time: until the response head, `timeoutMs` without progress (the request sent, or a chunk of its
 * body); then `idleTimeoutMs` between two chunks of the answer while the client keeps reading.
 * Before the head every failure is a problem answer (413, 502, 503, 504); after it the status is
 * sent, so a failure can only cut the client's connection, which is counted.
 *
 * The service's breaker admits the request and hears of it once the head is in (a 5xx, no head,
 * a time-out are failures), so an hour-long stream is never the half-open probe for an hour.
 */
class Relay implements Dispatcher.DispatchHandler {
  readonly done: Promise<void>;
  readonly #req: IncomingMessage;
  readonly #res: HgResponse;
  readonly #plan: RelayPlan;
  readonly #probe: boolean;
  readonly #startedMs = performance.now();
  #resolve!: () => void;
  #reject!: (err: HgError) => void;
  #controller: Dispatcher.DispatchController | null = null;
  #abortedWith: Error | null = null;
  #headTimer: NodeJS.Timeout | null = null;
  #idleTimer: NodeJS.Timeout | null = null;
  /** The client's socket is full: the upstream is paused and its silence is not idling. */
  #waitingForClient = false;
  #timedOut = false;
  #headArrived = false;
  #finished = false;
  #clientGone = false;

  constructor(req: IncomingMessage, res: HgResponse, plan: RelayPlan, probe: boolean) {
    this.#req = req;
    this.#res = res;
    this.#plan = plan;
    this.#probe = probe;
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  start(body: RequestBody | null, headers: string[]): void {
    const { route, service, path, websocketKey } = this.#plan;
    this.#headTimer = setTimeout(() => this.#abort(new Aborted('no response head in time'), true), route.timeoutMs ?? service.timeoutMs);
    this.#res.once('close', this.#onClientClose);
    const options: Dispatcher.DispatchOptions = { path, method: this.#req.method as Dispatcher.HttpMethod, headers, body, headersTimeout: 0, bodyTimeout: 0 };
    if (websocketKey !== null) options.upgrade = 'websocket';
    try {
      service.pool().dispatch(options, this);
    } catch (err) {
      this.onResponseError(null, err as Error);
    }
  }

  /** A chunk of the request body arrived: progress towards the head. */
  readonly progress = (): void => {
    this.#headTimer?.refresh();
  };

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortedWith !== null) controller.abort(this.#abortedWith);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    // An informational answer (103 Early Hints) comes before the real one.
    if (status < 200 || this.#finished) return;
    this.#arrived(status >= 500 ? 'bad_status' : status === 404 ? 'not_found' : 'ok');
    const res = this.#res;
    const out = returnedResponseHeaders(headers);
    out['x-request-id'] = res.requestId;
    const vary = res.getHeader('vary');
    if (typeof vary === 'string' && out['vary'] !== undefined) out['vary'] = `${vary}, ${String(out['vary'])}`;
    // A body the upstream answered before reading whole is not read on: the connection cannot carry another request.
    if (!this.#req.complete) res.shouldKeepAlive = false;
    res.writeHead(status, out);
    // The head goes at once, not with the first chunk: an event stream's client learns it is open.
    res.flushHeaders();
    this.#idleTimer = setTimeout(this.#onIdle, this.#plan.route.idleTimeoutMs);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#finished) return;
    this.#idleTimer?.refresh();
    const res = this.#res;
    res.bytes += chunk.length;
    if (res.write(chunk)) return;
    controller.pause();
    this.#waitingForClient = true;
    res.once('drain', () => {
      this.#waitingForClient = false;
      this.#idleTimer?.refresh();
      controller.resume();
    });
  }

  onResponseEnd(): void {
    if (this.#finished) return;
    this.#finish();
    this.#res.end();
    this.#resolve();
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    if (this.#finished) return;
    const { service, route, observer } = this.#plan;
    if (!this.#headArrived) {
      // A body the client sent past the limit is the client's doing, not the upstream's.
      const ours = err instanceof HgError;
      this.#arrived(ours || this.#clientGone ? 'none' : this.#timedOut ? 'timeout' : 'unreachable');
      this.#finish();
      if (this.#clientGone) return this.#resolve();
      if (ours) return this.#reject(err);
      const ms = route.timeoutMs ?? service.timeoutMs;
      if (this.#timedOut)
        return this.#reject(new HgError('HG_ERR_UPSTREAM_TIMEOUT', { detail: `${service.who} sent no response head within ${ms} ms.`, cause: err }));
      return this.#reject(badGateway(`${service.who} could not be reached.`, err));
    }
    this.#finish();
    if (this.#clientGone) return this.#resolve();
    // The status is sent: all that is left is to cut the client's connection, so it cannot take a
    // partial body for a whole one.
    const reason: CutReason = this.#timedOut ? 'upstream_idle' : 'upstream_lost';
    if (reason === 'upstream_lost') service.breaker.failed(false);
    observer.passthroughCut(route.label, reason);
    setUnendedStatus(this.#res, reason === 'upstream_idle' ? 504 : 502);
    this.#res.destroy();
    this.#resolve();
  }

  onRequestUpgrade(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    const key = this.#plan.websocketKey;
    if (this.#finished || key === null) {
      socket.destroy();
      return;
    }
    const accepted = status === 101 && upstreamAccepted(headers, key);
    this.#arrived(accepted ? 'ok' : 'bad_status');
    this.#finish();
    if (!accepted || this.#clientGone) {
      socket.destroy();
      if (this.#clientGone) this.#resolve();
      else this.#reject(badGateway(`${this.#plan.service.who} did not complete the WebSocket handshake.`));
      return;
    }
    const res = this.#res;
    const client = this.#req.socket;
    res.off('close', this.#onClientClose);
    setUnendedStatus(res, 101);
    client.write(switchingHead(headers, key, res.requestId));
    const head = upgradeHeadOf(this.#req);
    if (head !== undefined && head.length > 0) socket.write(head);
    const { tunnels, route, observer } = this.#plan;
    tunnels.add(client);
    tunnel(client, socket, route.idleTimeoutMs, (bytes, idle) => {
      tunnels.delete(client);
      res.bytes = bytes;
      if (idle) observer.passthroughCut(route.label, 'upstream_idle');
    });
    this.#resolve();
  }

  /**
   * The head (or the end of any hope of one) is in: the breaker and the metrics hear of it once.
   * `none`: the exchange ended with no word on the upstream (the client left, or its body went
   * past the limit), which neither counts for nor against it.
   */
  #arrived(outcome: UpstreamOutcome | 'none'): void {
    if (this.#headArrived) return;
    this.#headArrived = true;
    if (this.#headTimer !== null) clearTimeout(this.#headTimer);
    const { service, observer } = this.#plan;
    if (outcome === 'none') {
      service.breaker.released(this.#probe);
      return;
    }
    const ms = performance.now() - this.#startedMs;
    this.#res.upstreamMs = ms;
    observer.upstreamResult(service.name, outcome, ms);
    if (outcome === 'ok' || outcome === 'not_found') service.breaker.succeeded(this.#probe);
    else service.breaker.failed(this.#probe);
  }

  #finish(): void {
    this.#finished = true;
    if (this.#headTimer !== null) clearTimeout(this.#headTimer);
    if (this.#idleTimer !== null) clearTimeout(this.#idleTimer);
    this.#res.off('close', this.#onClientClose);
  }

  readonly #onIdle = (): void => {
    if (this.#waitingForClient) {
      this.#idleTimer?.refresh();
      return;
    }
    this.#abort(new Aborted('the upstream sent nothing for the idle time-out'), true);
  };

  /** The client left before its answer ended: the upstream request goes too. */
  readonly #onClientClose = (): void => {
    if (this.#finished || this.#res.writableFinished) return;
    this.#clientGone = true;
    this.#abort(CLIENT_GONE, false);
  };

  #abort(reason: Error, timedOut: boolean): void {
    if (this.#finished) return;
    this.#timedOut = timedOut;
    if (this.#controller === null) this.#abortedWith = reason;
    else this.#controller.abort(reason);
  }
}

/**
 * Passes one request through as `plan` says; settles once the answer has ended or been cut (or the
 * tunnel is open), rejects with the problem to answer while no status was sent.
 */
export function relay(req: IncomingMessage, res: HgResponse, plan: RelayPlan): Promise<void> {
  const { route, service } = plan;
  const withBody = carriesBody(req);
  const declared = req.headers['content-length'];
  if (withBody && declared !== undefined && Number(declared) > route.maxBodyBytes) return Promise.reject(bodyTooLarge(route.maxBodyBytes, route.maxBodyKey));
  const admitted = service.breaker.admit();
  if (admitted > 0) {
    plan.observer.upstreamResult(service.name, 'rejected', 0);
    return Promise.reject(unavailable(admitted, service.who));
  }
  const relayed = new Relay(req, res, plan, admitted === PROBE);
  const body = withBody ? new RequestBody(req, route.maxBodyBytes, () => bodyTooLarge(route.maxBodyBytes, route.maxBodyKey), relayed.progress) : null;
  // The client waits for this before it sends the body (RFC 9110 section 10.1.1): every check has passed.
  if (withBody && req.headers.expect?.toLowerCase() === '100-continue') res.writeContinue();
  relayed.start(body, [...forwardedRequestHeaders(req.rawHeaders, req.headers, withBody, plan.keyHeader ?? null), ...service.headersFor(plan.call)]);
  return relayed.done;
}
