import { IncomingMessage, ServerResponse, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { mergeDeferred } from './deferred-headers.ts';
import type { RequestTrace } from '../observability/tracing.ts';

/**
 * The gateway's response object (node:http `ServerResponse` option): it carries what the access
 * log and the metrics need about the exchange, as plain fields set once per request, so the
 * hot path needs no closure, map or listener to remember them.
 */
export class HgResponse<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {
  /** performance.now() when the request reached the gateway. */
  startedAt: number = performance.now();
  requestId = '';
  /** Cache outcome for the access log: hit, miss, collapsed, stale, bypass; '' when not cacheable. */
  cacheOutcome = '';
  /** Time spent waiting for the upstream, in ms; -1 when it was not asked. */
  upstreamMs = -1;
  /** An assembled answer's Embed-Status (parts left out or stale), for the access log; '' for none. */
  embedStatus = '';
  /** Body bytes written (set by the writers), for the access log. */
  bytes = 0;
  /** Index of the route's statistics (see RequestStats); -1 until routed. */
  routeIndex = -1;
  /** True once metrics and the access log have seen this exchange. */
  recorded = false;
  /**
   * Header fields every answer to this request carries (CORS), as name/value pairs, not yet set:
   * setHeader would put the answer on node:http's slow header path (an object of fields built per
   * answer), so they are merged into the writer's own flat list when the head is written.
   */
  #deferred: readonly string[] | null = null;

  /** Fields to write with whatever head this answer gets, exactly as if set now with setHeader. */
  deferHeaders(fields: readonly string[]): void {
    this.#deferred = fields;
  }

  /** Sets the deferred fields for real, before any field set one by one or a head without a flat list. */
  #setDeferred(): void {
    const fields = this.#deferred;
    if (fields === null) return;
    this.#deferred = null;
    for (let i = 0; i < fields.length; i += 2) super.setHeader(fields[i]!, fields[i + 1]!);
  }

  override writeHead(statusCode: number, statusMessage?: string, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  override writeHead(statusCode: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  override writeHead(
    statusCode: number,
    messageOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const deferred = this.#deferred;
    if (deferred !== null && Array.isArray(messageOrHeaders) && headers === undefined) {
      const merged = mergeDeferred(deferred, messageOrHeaders);
      if (merged !== null) {
        this.#deferred = null;
        return super.writeHead(statusCode, merged);
      }
    }
    this.#setDeferred();
    return typeof messageOrHeaders === 'string' ? super.writeHead(statusCode, messageOrHeaders, headers) : super.writeHead(statusCode, messageOrHeaders);
  }

  override setHeader(name: string, value: number | string | readonly string[]): this {
    this.#setDeferred();
    return super.setHeader(name, value);
  }

  override appendHeader(name: string, value: string | readonly string[]): this {
    this.#setDeferred();
    return super.appendHeader(name, value);
  }

  override getHeader(name: string): number | string | string[] | undefined {
    this.#setDeferred();
    return super.getHeader(name);
  }

  override hasHeader(name: string): boolean {
    this.#setDeferred();
    return super.hasHeader(name);
  }

  override getHeaders(): OutgoingHttpHeaders {
    this.#setDeferred();
    return super.getHeaders();
  }

  override getHeaderNames(): string[] {
    this.#setDeferred();
    return super.getHeaderNames();
  }

  override removeHeader(name: string): void {
    this.#setDeferred();
    super.removeHeader(name);
  }
}

/** The gateway's request object: the token's subject, once authenticated, for the access log. */
export class HgRequest extends IncomingMessage {
  subject: string | undefined = undefined;
  /** The rest of a refused body is being read and dropped (body.ts discardBody): the connection may stay. */
  discardingBody = false;
  /** The request's trace, set by the dispatcher only while tracing is on (declared: no field, no store, when it is off). */
  declare trace?: RequestTrace;
}

/** On an answer that ends without end() (see setUnendedStatus): the status its record shows. */
const UNENDED_STATUS = Symbol('hypergate.unendedStatus');
/** On a request that came through node:http's 'upgrade' event: the bytes that followed its head. */
const UPGRADE_HEAD = Symbol('hypergate.upgradeHead');

type Marked = { [UNENDED_STATUS]?: number; [UPGRADE_HEAD]?: Buffer };

/**
 * The status the access log and the metrics record for an answer that will not end through
 * end(): 101 for a WebSocket tunnel, which ends when either side closes; 502 or 504 for a stream
 * the upstream broke off after its status was sent. Without one such an answer is a 499 (the
 * client left). Set only on those answers: the others carry no such field.
 */
export function setUnendedStatus(res: ServerResponse, status: number): void {
  (res as Marked)[UNENDED_STATUS] = status;
}

export function unendedStatus(res: ServerResponse): number {
  return (res as Marked)[UNENDED_STATUS] ?? 499;
}

/** Marks a request as one node:http handed over as an upgrade, with the bytes read past its head. */
export function markUpgrade(req: IncomingMessage, head: Buffer): void {
  (req as Marked)[UPGRADE_HEAD] = head;
}

/** The bytes read past an upgrade request's head; undefined for every other request. */
export function upgradeHeadOf(req: IncomingMessage): Buffer | undefined {
  return (req as Marked)[UPGRADE_HEAD];
}
