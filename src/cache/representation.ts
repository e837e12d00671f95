import { createHash } from 'node:crypto';

export type HeaderList = readonly (string | number)[];

/**
 * A rendered answer as it sits in the cache: body bytes, strong ETag and the header list a hit
 * writes. Only `Age` changes between hits, and only once a second, so the header list is rebuilt
 * when the whole-second age changes rather than on every request.
 */
export class Representation {
  readonly body: Buffer;
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
  #headers: HeaderList = [];
  #notModifiedHeaders: HeaderList = [];

  constructor(body: Buffer, contentType: string, cacheControl: string, storedAtMs: number, expiresAtMs: number, vary: string | null = null) {
    this.vary = vary;
    this.body = body;
    this.contentType = contentType;
    this.cacheControl = cacheControl;
    this.storedAtMs = storedAtMs;
    this.expiresAtMs = expiresAtMs;
    // Strong validator (RFC 9110 section 8.8.3): a digest of the exact bytes.
    this.etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  }

  /** Whole seconds since the representation was current at the origin (RFC 9111 section 5.1). */
  ageAt(nowMs: number): number {
    const age = Math.floor((nowMs - this.storedAtMs) / 1000);
    return age > 0 ? age : 0;
  }

  #refresh(age: number): void {
    const ageText = String(age);
    this.#headers = [
      'Content-Type', this.contentType,
      'Cache-Control', this.cacheControl,
      'ETag', this.etag,
      'Age', ageText,
      'Content-Length', this.body.length,
    ];
    this.#notModifiedHeaders = ['Cache-Control', this.cacheControl, 'ETag', this.etag, 'Age', ageText];
    // A 304 carries the Vary a 200 would have (RFC 9110 section 15.4.5).
    if (this.vary !== null) {
      this.#headers = [...this.#headers, 'Vary', this.vary];
      this.#notModifiedHeaders = [...this.#notModifiedHeaders, 'Vary', this.vary];
    }
    this.#age = age;
  }

  /** Headers of a 200 answer at this age. */
  headers(age: number): HeaderList {
    if (age !== this.#age) this.#refresh(age);
    return this.#headers;
  }

  /** Headers of a 304 answer at this age (RFC 9110 section 15.4.5). */
  notModifiedHeaders(age: number): HeaderList {
    if (age !== this.#age) this.#refresh(age);
    return this.#notModifiedHeaders;
  }
}
