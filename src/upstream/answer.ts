import type { Clock } from '../lib/clock.ts';
import { isFieldValue } from '../lib/field-value.ts';
import { HgError } from '../lib/errors.ts';
import { isJsonMediaType, mediaTypeOf } from '../lib/media-type.ts';
import type { Answer, BodyPlan, PlanBody, ResponseHeaders } from '../lib/exchange.ts';
import { isEntityTag } from '../protocol/etag.ts';
import { freshnessOf, type UpstreamFreshness } from './cache-control.ts';

/**
 * An upstream answer as the resource layer sees it: the decoded body, its freshness and its
 * validator (the upstream's ETag, or null), or "no such resource".
 */
export type UpstreamResult<T> =
  | {
      readonly found: true;
      readonly value: T;
      readonly freshness: UpstreamFreshness;
      readonly ageSeconds: number;
      readonly etag: string | null;
      /** The exposed headers it sent (exposedHeaders), name and value in turn; null for none, absent when the service exposes none. */
      readonly exposed?: readonly string[] | null;
    }
  | { readonly found: false };

/** What the upstream answered to a write: its status, validator, and body when it sent one. */
export interface WriteResult {
  readonly status: number;
  readonly etag: string | null;
  readonly freshness: UpstreamFreshness;
  /** The parsed body of a JSON answer, undefined for none (or one that could not be read). */
  readonly json: unknown;
  /**
   * Why a JSON body it sent could not be read (not valid JSON, over maxResponseBytes), or null.
   * The status still says what the upstream did: a 2xx made the change whatever its body.
   */
  readonly unreadable: string | null;
  /** The body was application/problem+json: its own `detail` may be shown (RFC 9457). */
  readonly problem: boolean;
  /** For the log line of a write this answer fails (a status that is no success): the service's name, the status and a redacted snippet of the body. */
  readonly log?: Readonly<Record<string, string | number>>;
}

/**
 * Turns the upstream's JSON (and, where paging needs them, its headers: a total count, a `Link`)
 * into what the caller needs, inside the attempt: a decoder that throws (an invalid record, an id
 * that does not match) makes the attempt a `bad_body` in the metrics, not an `ok` followed by a 502.
 */
export type Decode<T> = (json: unknown, headers: ResponseHeaders) => T;

/** The upstream's ETag when it is one entity-tag (etag.ts); anything else is ignored. */
function etagOf(value: string | string[] | undefined): string | null {
  return typeof value === 'string' && isEntityTag(value) ? value : null;
}

/**
 * The headers of `expose` (a service's exposeHeaders, as configured) the answer carries, name and
 * value in turn, for the client; null when it carries none. A field sent on several lines is one
 * list, joined with ", " (RFC 9110 section 5.3); a value that could not go on in a header is left out.
 */
export function exposedHeaders(headers: ResponseHeaders, expose: readonly string[]): readonly string[] | null {
  let out: string[] | null = null;
  for (const name of expose) {
    const value = headers[name.toLowerCase()];
    const text = Array.isArray(value) ? value.join(', ') : value;
    if (typeof text !== 'string' || !isFieldValue(text)) continue;
    (out ??= []).push(name, text);
  }
  return out;
}

/** Age (RFC 9111 section 5.1) in whole seconds; 0 when absent or not a positive integer. */
function ageSecondsOf(value: string | string[] | undefined): number {
  const age = Number(value);
  return Number.isInteger(age) && age > 0 ? age : 0;
}

function isJsonContentType(value: string | string[] | undefined): boolean {
  return isJsonMediaType(mediaTypeOf(value));
}

export function badGateway(detail: string, cause?: unknown): HgError {
  return new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail, cause });
}

function tooLarge(who: string): HgError {
  return badGateway(`${who} answered with a body larger than allowed.`);
}

function parseJson(body: Buffer, who: string): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw badGateway(`${who} answered with invalid JSON.`, err);
  }
}

/**
 * A read's body: a 200's JSON is kept unless announced over the limit; a non-JSON 200 is refused
 * (the connection dropped rather than read); any other status is drained and the connection kept.
 */
export const planRead: PlanBody = (status, headers, limit): BodyPlan => {
  if (status !== 200) return 'drain';
  return isJsonContentType(headers['content-type']) && !(Number(headers['content-length']) > limit) ? 'keep' : 'refuse';
};

/** A write's body: JSON is kept (refused when announced over the limit); anything else, or none, is drained. */
export const planWrite: PlanBody = (status, headers, limit): BodyPlan => {
  const declared = Number(headers['content-length']);
  if (!isJsonContentType(headers['content-type']) || declared === 0 || status === 204) return 'drain';
  return declared > limit ? 'refuse' : 'keep';
};

/**
 * A read's answer decoded: 404 is "not found"; a 200 with a JSON body is the decoded value with
 * its freshness (measured from `clock`'s now, when Expires has no Date; `authorized`: the request
 * carried the client's Authorization, see freshnessOf), Age, ETag and the headers of `expose` it sent; anything else is a 502 naming `who`.
 */
export function readResult<T>(
  res: Answer,
  decode: Decode<T>,
  who: string,
  clock: Clock,
  authorized = false,
  expose: readonly string[] = [],
): UpstreamResult<T> {
  if (res.status === 404) return { found: false };
  if (res.status !== 200) throw badGateway(`${who} answered with status ${res.status}.`);
  if (!isJsonContentType(res.headers['content-type'])) throw badGateway(`${who} answered with a body that is not JSON.`);
  if (res.body === null) throw tooLarge(who);
  const value = decode(parseJson(res.body, who), res.headers);
  return {
    found: true,
    value,
    freshness: freshnessOf(res.headers, clock.now(), authorized),
    ageSeconds: ageSecondsOf(res.headers['age']),
    etag: etagOf(res.headers['etag']),
    ...(expose.length === 0 ? {} : { exposed: exposedHeaders(res.headers, expose) }),
  };
}

/**
 * A write's answer, whatever its status; a JSON body (up to `limit` bytes) is parsed, any other is
 * dropped. A body that cannot be read is said (`unreadable`), not thrown: the status is the
 * upstream's word on whether the change was made, and the caller must know it. `authorized` as
 * for readResult.
 */
export function writeResult(res: Answer, limit: number, clock: Clock, authorized = false): WriteResult {
  let json: unknown;
  let unreadable: string | null = null;
  if (planWrite(res.status, res.headers, limit) !== 'drain') {
    if (res.body === null) unreadable = 'its answer is larger than allowed';
    else if (res.body.length > 0) {
      try {
        json = JSON.parse(res.body.toString('utf8'));
      } catch {
        unreadable = 'its answer is not valid JSON';
      }
    }
  }
  const problem = mediaTypeOf(res.headers['content-type']) === 'application/problem+json';
  return { status: res.status, etag: etagOf(res.headers['etag']), freshness: freshnessOf(res.headers, clock.now(), authorized), json, unreadable, problem };
}
