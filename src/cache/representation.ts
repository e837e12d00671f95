import { bodyEtag } from '../protocol/etag.ts';
import { heldBytes } from './held-bytes.ts';
import { hitStatus } from '../protocol/cache-status.ts';

export type HeaderList = readonly (string | number)[];

/**
 * The header lists end with `Cache-Status, <value>, X-Request-Id, <value>`: the writer puts the
 * request's id in the last slot (and a miss's or a stale answer's Cache-Status in its slot) just
 * before writeHead, which copies the list into the head bytes synchronously.
 */
export const CACHE_STATUS_SLOT_FROM_END = 3;

/** Whole seconds whose Age and hit Cache-Status texts are kept once made (max-age is rarely above an hour). */
const MEMO_SECONDS = 3600;
const ageTexts: string[] = [];
const hitTexts: string[] = [];

/** `String(age)`, made once per value below MEMO_SECONDS: a hit allocates no string. */
function ageText(age: number): string {
  if (age >= MEMO_SECONDS) return String(age);
  return (ageTexts[age] ??= String(age));
}

/** The hit's RFC 9211 Cache-Status for this remaining freshness, made once per value. */
function hitText(ttl: number): string {
  if (ttl < 0 || ttl >= MEMO_SECONDS) return hitStatus(ttl);
  return (hitTexts[ttl] ??= hitStatus(ttl));
}

/**
 * The header lists a representation fills per answer, one per layout (200 or 304, with or
 * without Vary), shared by every representation: node:http's writeHead copies a list into the
 * head bytes before it returns, so a list is free again as soon as it is written. Per entry this
 * keeps no header array at all (two lists per format per entry, rebuilt each whole-second Age,
 * were most of a hit's garbage and ~300 bytes of every cached format; bench/RESULTS.md, `wide`).
 */
const OK_HEADERS = ['Content-Type', '', 'Cache-Control', '', 'ETag', '', 'Age', '', 'Content-Length', 0, 'Cache-Status', '', 'X-Request-Id', ''];
const OK_VARY_HEADERS = [
  'Content-Type',
  '',
  'Cache-Control',
  '',
  'ETag',
  '',
  'Age',
  '',
  'Content-Length',
  0,
  'Vary',
  '',
  'Cache-Status',
  '',
  'X-Request-Id',
  '',
];
// A 304 carries the Vary a 200 would have (RFC 9110 section 15.4.5).
const NOT_MODIFIED_HEADERS = ['Cache-Control', '', 'ETag', '', 'Age', '', 'Cache-Status', '', 'X-Request-Id', ''];
const NOT_MODIFIED_VARY_HEADERS = ['Cache-Control', '', 'ETag', '', 'Age', '', 'Vary', '', 'Cache-Status', '', 'X-Request-Id', ''];

/**
 * What many representations share: media type, Cache-Control, Vary, whether it may answer stale
 * and its lifetime. Kept once per distinct combination (a handful in practice) instead of once per
 * cached format: with 100,000 customers cached that was ~10 MB of fields and Cache-Control strings.
 */
class Form {
  readonly contentType: string;
  readonly cacheControl: string;
  readonly vary: string | null;
  readonly staleAllowed: boolean;
  /** expiresAtMs - storedAtMs. */
  readonly lifetimeMs: number;
  readonly lifetimeSeconds: number;
  /** Headers of the upstream's answer passed to the client (a service's exposeHeaders), name and value in turn; null for none. */
  readonly exposed: readonly string[] | null;
  /**
   * The list a 200 is filled into: the shared one of its layout, or, for a form with exposed
   * headers, its own with them before Cache-Status (filled the same way, slots at the same places;
   * a form without them costs a hit nothing more than before).
   */
  readonly ok: (string | number)[];

  constructor(contentType: string, cacheControl: string, vary: string | null, staleAllowed: boolean, lifetimeMs: number, exposed: readonly string[] | null) {
    this.contentType = contentType;
    this.cacheControl = cacheControl;
    this.vary = vary;
    this.staleAllowed = staleAllowed;
    this.lifetimeMs = lifetimeMs;
    this.lifetimeSeconds = Math.round(lifetimeMs / 1000);
    this.exposed = exposed;
    const shared = vary === null ? OK_HEADERS : OK_VARY_HEADERS;
    const tail = shared.length - CACHE_STATUS_SLOT_FROM_END - 1;
    this.ok = exposed === null ? shared : [...shared.slice(0, tail), ...exposed, ...shared.slice(tail)];
  }
}

/** Distinct forms remembered for sharing; past this the table starts over (sharing is only a saving). */
const MAX_FORMS = 1024;
const forms = new Map<string, Form>();

function formOf(
  contentType: string,
  cacheControl: string,
  vary: string | null,
  staleAllowed: boolean,
  lifetimeMs: number,
  exposed: readonly string[] | null,
): Form {
  const shape = `${contentType}\u0000${cacheControl}\u0000${vary ?? ''}\u0000${vary === null ? 0 : 1}${staleAllowed ? 1 : 0}\u0000${lifetimeMs}`;
  const key = exposed === null ? shape : `${shape}\u0000${exposed.join('\u0000')}`;
  let form = forms.get(key);
  if (form === undefined) {
    if (forms.size >= MAX_FORMS) forms.clear();
    form = new Form(contentType, cacheControl, vary, staleAllowed, lifetimeMs, exposed);
    forms.set(key, form);
  }
  return form;
}

/**
 * A rendered answer as it sits in the cache: body text, strong ETag and what its headers say.
 * The body is a string, not a Buffer: a small Buffer is a view on an 8 KB pool slab that
 * also holds short-lived bytes (token decoding, upstream reads), so each cached body kept a whole
 * slab alive; with 100,000 customers cached that was ~300 MB of RSS over a ~210 MB heap
 * (bench/RESULTS.md, memory). A string costs its length, and node:http writes it together with
 * the head in one write, as fast as head + Buffer (measured with wrk). The header list of an
 * answer is filled into a shared list (see OK_HEADERS) with memoised Age and Cache-Status texts,
 * so a hit allocates nothing whatever the entry and whatever its age.
 */
export class Representation {
  readonly body: string;
  /** The body's length in UTF-8 bytes (Content-Length). */
  readonly byteLength: number;
  /** What the body holds in memory (held-bytes.ts), for cache.maxBytes. */
  readonly heldBytes: number;
  readonly etag: string;
  /** When the representation was current at the origin, in ms (the upstream's Age is subtracted). */
  readonly storedAtMs: number;
  readonly #form: Form;

  constructor(
    body: string,
    contentType: string,
    cacheControl: string,
    storedAtMs: number,
    expiresAtMs: number,
    vary: string | null = null,
    staleAllowed = true,
    etag?: string,
    exposed: readonly string[] | null = null,
  ) {
    this.body = body;
    this.byteLength = Buffer.byteLength(body);
    this.heldBytes = heldBytes(body, this.byteLength);
    this.storedAtMs = storedAtMs;
    this.#form = formOf(contentType, cacheControl, vary, staleAllowed, expiresAtMs - storedAtMs, exposed);
    // Derived from the upstream's validator when it sent one (etag.ts), else a digest of the exact bytes.
    this.etag = etag ?? bodyEtag(body);
  }

  /**
   * How node:http turns the body into bytes: Latin-1 when every character is ASCII (then the
   * bytes are the same as UTF-8's, and Latin-1 is a plain copy where UTF-8 is an encoding pass:
   * ~2% more throughput on `hot`, bench/RESULTS.md), else UTF-8. Any character past ASCII takes
   * two or more UTF-8 bytes: equal lengths mean all ASCII.
   */
  get encoding(): 'latin1' | 'utf8' {
    return this.byteLength === this.body.length ? 'latin1' : 'utf8';
  }

  get contentType(): string {
    return this.#form.contentType;
  }

  get cacheControl(): string {
    return this.#form.cacheControl;
  }

  /** End of freshness, in ms. */
  get expiresAtMs(): number {
    return this.storedAtMs + this.#form.lifetimeMs;
  }

  /** The Vary field value (RFC 9110 section 12.5.5), or null for none. */
  get vary(): string | null {
    return this.#form.vary;
  }

  /** Whole seconds of freshness from storedAtMs. */
  get lifetimeSeconds(): number {
    return this.#form.lifetimeSeconds;
  }

  /** The upstream's headers a 200 passes to the client, name and value in turn; null for none. */
  get exposed(): readonly string[] | null {
    return this.#form.exposed;
  }

  /** May it answer once expired (the upstream did not forbid it; see cache-control.ts)? */
  get staleAllowed(): boolean {
    return this.#form.staleAllowed;
  }

  /** Whole seconds since the representation was current at the origin (RFC 9111 section 5.1). */
  ageAt(nowMs: number): number {
    const age = Math.floor((nowMs - this.storedAtMs) / 1000);
    return age > 0 ? age : 0;
  }

  /**
   * Headers of a 200 answer at this age, in a shared list (see OK_HEADERS) valid until the next
   * call of headers() or notModifiedHeaders(); the last slot is the request id's.
   */
  headers(age: number): (string | number)[] {
    const form = this.#form;
    const list = form.ok;
    list[1] = form.contentType;
    list[3] = form.cacheControl;
    list[5] = this.etag;
    list[7] = ageText(age);
    list[9] = this.byteLength;
    if (form.vary !== null) list[11] = form.vary;
    // RFC 9211 section 2.4: ttl is the remaining freshness lifetime as this cache sees it.
    list[list.length - CACHE_STATUS_SLOT_FROM_END] = hitText(form.lifetimeSeconds - age);
    return list;
  }

  /**
   * Headers of a 304 answer at this age, in a shared list like headers(): what RFC 9110 section
   * 15.4.5 says a 304 carries (Cache-Control, ETag, Vary), never the exposed headers of the 200.
   */
  notModifiedHeaders(age: number): (string | number)[] {
    const form = this.#form;
    const list = form.vary === null ? NOT_MODIFIED_HEADERS : NOT_MODIFIED_VARY_HEADERS;
    list[1] = form.cacheControl;
    list[3] = this.etag;
    list[5] = ageText(age);
    if (form.vary !== null) list[7] = form.vary;
    list[list.length - CACHE_STATUS_SLOT_FROM_END] = hitText(form.lifetimeSeconds - age);
    return list;
  }
}
