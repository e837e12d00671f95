import { bodyEtag } from './etag.ts';
import { hitStatus } from '../http/cache-status.ts';

export type HeaderList = readonly (string | number)[];

/**
 * The header lists end with `Cache-Status, <value>, X-Request-Id, <value>`: the writer puts the
 * request's id in the last slot just before writeHead, which copies the list into the head bytes
 * synchronously, so one shared list serves every hit without a per-request copy.
 */
export const CACHE_STATUS_SLOT_FROM_END = 3;

/**
 * A rendered answer as it sits in the cache: body text, strong ETag and the header list a hit
 * writes. The body is a string, not a Buffer: a small Buffer is a view on an 8 KB pool slab that
 * also holds short-lived bytes (token decoding, upstream reads), so each cached body kept a whole
 * slab alive; with 100,000 customers cached that was ~300 MB of RSS over a ~210 MB heap
 * (bench/RESULTS.md, memory). A string costs its length, and node:http writes it together with
 * the head in one write, as fast as head + Buffer (measured with wrk). Only `Age` changes between hits, and only once a second, so the header list is rebuilt
 * when the whole-second age changes rather than on every request.
 */
export class Representation {
  readonly body: string;
  /** The body's length in UTF-8 bytes (Content-Length). */
  readonly byteLength: number;
  /**
   * How node:http turns the body into bytes: Latin-1 when every character is ASCII (then the
   * bytes are the same as UTF-8's, and Latin-1 is a plain copy where UTF-8 is an encoding pass:
   * ~2% more throughput on `hot`, bench/RESULTS.md), else UTF-8.
   */
  readonly encoding: 'latin1' | 'utf8';
  readonly etag: string;
  readonly contentType: string;
  readonly cacheControl: string;
  /** When the representation was current at the origin, in ms (the upstream's Age is subtracted). */
  readonly storedAtMs: number;
  /** End of freshness, in ms. */
  readonly expiresAtMs: number;
  /** The Vary field value (RFC 9110 section 12.5.5), or null for none. */
  readonly vary: string | null;
  #age = -1;
  #headers: (string | number)[] = [];
  #notModifiedHeaders: (string | number)[] = [];
  /** Whole seconds of freshness from storedAtMs. */
  readonly lifetimeSeconds: number;
  /** May it answer once expired (the upstream did not forbid it; see cache-control.ts)? */
  readonly staleAllowed: boolean;

  /** `etag` is given only for a representation made elsewhere (the shared tier carries the one it was served with). */
  constructor(body: string, contentType: string, cacheControl: string, storedAtMs: number, expiresAtMs: number, vary: string | null = null, staleAllowed = true, etag?: string) {
    this.vary = vary;
    this.staleAllowed = staleAllowed;
    this.body = body;
    this.byteLength = Buffer.byteLength(body);
    // Any character past ASCII takes two or more UTF-8 bytes: equal lengths mean all ASCII.
    this.encoding = this.byteLength === body.length ? 'latin1' : 'utf8';
    this.contentType = contentType;
    this.cacheControl = cacheControl;
    this.storedAtMs = storedAtMs;
    this.expiresAtMs = expiresAtMs;
    this.lifetimeSeconds = Math.round((expiresAtMs - storedAtMs) / 1000);
    // Derived from the upstream's validator when it sent one (etag.ts), else a digest of the exact bytes.
    this.etag = etag ?? bodyEtag(body);
  }

  /** Whole seconds since the representation was current at the origin (RFC 9111 section 5.1). */
  ageAt(nowMs: number): number {
    const age = Math.floor((nowMs - this.storedAtMs) / 1000);
    return age > 0 ? age : 0;
  }

  #refresh(age: number): void {
    const ageText = String(age);
    // RFC 9211 section 2.4: ttl is the remaining freshness lifetime as this cache sees it.
    const cacheStatus = hitStatus(this.lifetimeSeconds - age);
    // Vary goes before the Cache-Status and X-Request-Id slots, which stay last (see above).
    const vary = this.vary === null ? [] : ['Vary', this.vary];
    this.#headers = [
      'Content-Type', this.contentType,
      'Cache-Control', this.cacheControl,
      'ETag', this.etag,
      'Age', ageText,
      'Content-Length', this.byteLength,
      ...vary,
      'Cache-Status', cacheStatus,
      'X-Request-Id', '',
    ];
    // A 304 carries the Vary a 200 would have (RFC 9110 section 15.4.5).
    this.#notModifiedHeaders = ['Cache-Control', this.cacheControl, 'ETag', this.etag, 'Age', ageText, ...vary, 'Cache-Status', cacheStatus, 'X-Request-Id', ''];
    this.#age = age;
  }

  /** Headers of a 200 answer at this age; the last slot is the request id's (see above). */
  headers(age: number): (string | number)[] {
    if (age !== this.#age) this.#refresh(age);
    return this.#headers;
  }

  /** Headers of a 304 answer at this age (RFC 9110 section 15.4.5). */
  notModifiedHeaders(age: number): (string | number)[] {
    if (age !== this.#age) this.#refresh(age);
    return this.#notModifiedHeaders;
  }
}
