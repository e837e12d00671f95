import { Pool, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../config/types.ts';
import { HgError } from '../errors.ts';
import { parseCacheControl, type UpstreamFreshness } from './cache-control.ts';

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

  constructor(config: UpstreamConfig, url: string) {
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
  async getJson(path: string): Promise<UpstreamResult> {
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
        headers: { accept: 'application/json' },
        signal: controller.signal,
      });
      if (res.statusCode === 404) {
        await res.body.dump();
        return { found: false };
      }
      if (res.statusCode !== 200) {
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
      return {
        found: true,
        json,
        freshness: parseCacheControl(res.headers['cache-control']),
        ageSeconds: Number.isInteger(age) && age > 0 ? age : 0,
      };
    } catch (err) {
      if (timedOut || isUndiciTimeout(err)) throw new HgError('HG_ERR_UPSTREAM_TIMEOUT', { detail: `The customer service did not answer within ${this.#timeoutMs} ms.`, cause: err });
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
