import type { ClaimTable, ClaimValue } from '../auth/claims.ts';
import { headerValueOf } from '../config/service-checks.ts';
import type { UpstreamConfig } from '../config/types.ts';
import type { HgError } from '../lib/errors.ts';
import type { UpstreamCall } from './call.ts';
import { claimHeaderValue } from './claim-header.ts';
import { ForwardedHeaders } from './forwarded.ts';

/** Sets `name` (lower case) in a flat [name, value, ...] header list, in place of any value it has. */
export function setHeader(headers: string[], name: string, value: string): void {
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] === name) {
      headers[i + 1] = value;
      return;
    }
  }
  headers.push(name, value);
}

/**
 * The headers of a service's requests: accept, the configured fixed ones, our request id and trace
 * context, and the Authorization header and claims this service is configured to receive.
 *
 * accept and the fixed headers are undici's flat [name, value, ...] list, built once; each request
 * copies it. Not an object: V8 (Node 20) gives `{ ...base }` with a property added a hidden class
 * of its own each time once the code is optimised, so every request made a map, a descriptor array
 * and an enumeration cache in the old generation (bench/RESULTS.md, memory).
 */
export class RequestHeaders {
  readonly #base: readonly string[];
  readonly #forwardAuthorization: boolean;
  /** [header name, index into the principal's kept claims, claim name] per forwardClaims entry. */
  readonly #forwardClaims: readonly (readonly [string, number, string])[];
  readonly #maxClaimBytes: number;
  /** The client's request headers this service receives (forwardHeaders), lower case. */
  readonly #forwardHeaders: readonly string[];
  /** Builds Forwarded and X-Forwarded-* (forwarded: true), else null. */
  readonly #forwarded: ForwardedHeaders | null;
  /** The configured header values (API keys, say): never to appear in a log line. */
  readonly secrets: readonly string[];

  /**
   * `claims`: the claims verified tokens keep, to find those forwardClaims names; `env`: where
   * `{"env": NAME}` values are read (once, here); `trustProxy`: server.trustProxy, for `forwarded`.
   */
  constructor(config: UpstreamConfig, claims: ClaimTable | undefined, env: NodeJS.ProcessEnv, trustProxy: readonly string[] = []) {
    const fixed: Record<string, string> = { accept: 'application/json' };
    // Validated at start (config/service-checks.ts): names are tokens, values are set and clean.
    for (const [header, value] of Object.entries(config.headers)) fixed[header.toLowerCase()] = headerValueOf(value, env) ?? '';
    this.#base = Object.entries(fixed).flat();
    this.secrets = Object.entries(fixed).flatMap(([name, value]) => (name === 'accept' || value === '' ? [] : [value]));
    this.#forwardAuthorization = config.forwardAuthorization;
    this.#maxClaimBytes = config.maxClaimBytes;
    // By lower-case name, the last one winning, as the headers object they were written into did.
    const forwarded = new Map<string, readonly [string, number, string]>();
    if (claims !== undefined)
      for (const [header, claim] of Object.entries(config.forwardClaims))
        forwarded.set(header.toLowerCase(), [header.toLowerCase(), claims.indexOf(claim), claim]);
    this.#forwardClaims = [...forwarded.values()];
    this.#forwardHeaders = [...new Set(config.forwardHeaders.map((h) => h.toLowerCase()))];
    this.#forwarded = config.forwarded ? new ForwardedHeaders(trustProxy) : null;
  }

  /** Does a request on behalf of `call` carry the client's Authorization (forwardAuthorization)? It limits what a shared cache may keep (cache-control.ts). */
  authorizes(call: UpstreamCall | undefined): boolean {
    return this.#forwardAuthorization && call?.authorization !== undefined;
  }

  /** Does this service receive claims (so a request may be refused for one: the OpenAPI document lists it)? */
  get forwardsClaims(): boolean {
    return this.#forwardClaims.length > 0;
  }

  /** The 400 when one of these kept claims cannot be forwarded to this service (claim-header.ts), else null. */
  claimProblem(claims: readonly ClaimValue[] | undefined): HgError | null {
    for (const [, index, claim] of this.#forwardClaims) {
      const value = claims?.[index];
      if (value === undefined) continue;
      const sent = claimHeaderValue(claim, value, this.#maxClaimBytes);
      if (typeof sent !== 'string') return sent;
    }
    return null;
  }

  /**
   * A new list for one request on behalf of `call` (none: the fixed headers only). Throws the 400
   * of a claim that cannot be forwarded: before the breaker is asked, so it never counts there.
   */
  of(call: UpstreamCall | undefined): string[] {
    // The names pushed here are managed (config/service-checks.ts): no configured header has them.
    const headers = this.#base.slice();
    if (call === undefined) return headers;
    headers.push('x-request-id', call.requestId);
    if (call.traceparent !== undefined) {
      headers.push('traceparent', call.traceparent);
      if (call.tracestate !== undefined) headers.push('tracestate', call.tracestate);
    }
    if (this.#forwardAuthorization && call.authorization !== undefined) headers.push('authorization', call.authorization);
    for (const [header, index, claim] of this.#forwardClaims) {
      const value = call.claims?.[index];
      // A claim that is absent, or not a string or number, sends no header (ClaimTable.keep).
      if (value === undefined) continue;
      const sent = claimHeaderValue(claim, value, this.#maxClaimBytes);
      if (typeof sent !== 'string') throw sent;
      headers.push(header, sent);
    }
    const req = call.request;
    if (req === undefined) return headers;
    // Node has refused a request whose header values hold CR, LF or NUL: what is read here is clean.
    for (const name of this.#forwardHeaders) {
      const value = req.headers[name];
      if (value !== undefined) headers.push(name, Array.isArray(value) ? value.join(', ') : value);
    }
    this.#forwarded?.append(headers, req);
    return headers;
  }
}

/** Trace headers a request to a service may carry: the caller's, replaced by those of an attempt's span. */
const TRACE_HEADERS = new Set(['traceparent', 'tracestate', 'b3']);

/** `headers` (name, value, ...) with the caller's trace headers replaced by `trace` (tracing.enabled). */
export function withTraceHeaders(headers: readonly string[], trace: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i] as string;
    if (!TRACE_HEADERS.has(name)) out.push(name, headers[i + 1] as string);
  }
  out.push(...trace);
  return out;
}
