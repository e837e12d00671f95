import { performance } from 'node:perf_hooks';
import { Pool, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../config/types.ts';
import { HgError } from '../errors.ts';
import type { UpstreamObserver, UpstreamOutcome } from '../observability/metrics.ts';
import { parseCacheControl, type UpstreamFreshness } from './cache-control.ts';

/** Who asked: passed to the upstream so its logs line up with ours (W3C Trace Context). */
export interface UpstreamTrace {
  readonly requestId: string;
  /** A valid `traceparent` to forward, or undefined. */
  readonly traceparent: string | undefined;
  readonly tracestate?: string | undefined;
}

export type UpstreamResult =
  | { readonly found: true; readonly json: unknown; readonly freshness: UpstreamFreshness; readonly ageSeconds: number }
  | { readonly found: false };

function badGateway(detail: string, cause?: unknown): HgError {
  return new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail, cause });
}

function isJsonContentType(value: string | string[] | undefined): boolean {
  if (typeof value !== 'string') return false;
  const type = value.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * Drops a response body we will not read. undici's body stream emits an AbortError when destroyed;
 * with no listener that would be an uncaught exception and take the process down.
 */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function isUndiciTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNDICI_TIMEOUTS.has(code);
}

/**
 * The upstream customer service over an undici pool with keep-alive. Every request has one
 * deadline covering connect, headers and the whole body: undici's bodyTimeout alone only measures
 * the gaps between chunks, so a drip-fed body would never trip it. Redirects are never followed.
 */
export class UpstreamClient {
  readonly #pool: Pool;
  readonly #basePath: string;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly origin: string;
  readonly #observer: UpstreamObserver | undefined;

  constructor(config: UpstreamConfig, url: string, observer?: UpstreamObserver) {
    this.#observer = observer;
    const base = new URL(url);
    this.origin = base.origin;
    this.#basePath = base.pathname.replace(/\/+$/, '');
    this.#timeoutMs = config.timeoutMs;
    this.#maxBytes = config.maxResponseBytes;
    this.#pool = new Pool(base.origin, {
      connections: config.connections,
      pipelining: 1,
      keepAliveTimeout: 4000, // 4 s idle, under Node's 5 s server default so we close first
      connect: { timeout: config.timeoutMs },
      headersTimeout: config.timeoutMs,
      bodyTimeout: config.timeoutMs,
    });
  }

  /** GET <base><path>, where `path` was built from validated parts only. */
  async getJson(path: string, trace?: UpstreamTrace): Promise<UpstreamResult> {
    const started = performance.now();
    const seen: { outcome: UpstreamOutcome } = { outcome: 'unreachable' };
    try {
      return await this.#get(path, trace, seen);
    } finally {
      this.#observer?.upstreamResult(seen.outcome, performance.now() - started);
    }
  }

  async #get(path: string, trace: UpstreamTrace | undefined, seen: { outcome: UpstreamOutcome }): Promise<UpstreamResult> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (trace !== undefined) {
      headers['x-request-id'] = trace.requestId;
      if (trace.traceparent !== undefined) {
        headers['traceparent'] = trace.traceparent;
        if (trace.tracestate !== undefined) headers['tracestate'] = trace.tracestate;
      }
    }
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.#timeoutMs);
    try {
      const res = await this.#pool.request({
        path: this.#basePath + path,
        method: 'GET',
        headers,
        signal: controller.signal,
      });
      seen.outcome = 'bad_body';
      if (res.statusCode === 404) {
        await res.body.dump();
        seen.outcome = 'not_found';
        return { found: false };
      }
      if (res.statusCode !== 200) {
        seen.outcome = 'bad_status';
        await res.body.dump().catch(() => {});
        throw badGateway(`The customer service answered with status ${res.statusCode}.`);
      }
      if (!isJsonContentType(res.headers['content-type'])) {
        discard(res.body);
        throw badGateway('The customer service answered with a body that is not JSON.');
      }
      const declared = Number(res.headers['content-length']);
      if (declared > this.#maxBytes) {
        discard(res.body);
        throw badGateway('The customer service answered with a body larger than allowed.');
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > this.#maxBytes) {
          discard(res.body);
          throw badGateway('The customer service answered with a body larger than allowed.');
        }
        chunks.push(chunk as Buffer);
      }
      let json: unknown;
      try {
        json = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
      } catch (err) {
        throw badGateway('The customer service answered with invalid JSON.', err);
      }
      const age = Number(res.headers['age']);
      seen.outcome = 'ok';
      return {
        found: true,
        json,
        freshness: parseCacheControl(res.headers['cache-control']),
        ageSeconds: Number.isInteger(age) && age > 0 ? age : 0,
      };
    } catch (err) {
      if (timedOut || isUndiciTimeout(err)) {
        seen.outcome = 'timeout';
        throw new HgError('HG_ERR_UPSTREAM_TIMEOUT', { detail: `The customer service did not answer within ${this.#timeoutMs} ms.`, cause: err });
      }
      if (err instanceof HgError) throw err;
      throw badGateway('The customer service could not be reached.', err);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
