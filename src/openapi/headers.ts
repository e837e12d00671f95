import type { HgErrorCode } from '../lib/errors.ts';
import type { ParamDoc } from '../protocol/route-doc.ts';

/** An OpenAPI header object: `required` where every such answer carries it. */
export interface HeaderDoc {
  readonly description: string;
  readonly required: boolean;
  readonly schema: Readonly<Record<string, unknown>>;
}

const STRING = { type: 'string' };
const SECONDS = { type: 'integer', minimum: 0 };
const always = (description: string, schema: Readonly<Record<string, unknown>> = STRING): HeaderDoc => ({ description, required: true, schema });
const sometimes = (description: string, schema: Readonly<Record<string, unknown>> = STRING): HeaderDoc => ({ description, required: false, schema });

export const REQUEST_ID = always("This request's id (the caller's own when it sent a safe X-Request-Id): quote it when reporting a problem.");
const REQUEST_ID_OF_PROBLEM = sometimes("This request's id; absent only when the request could not be parsed at all.");
const NO_STORE = always('no-store: answers that are not a read of a representation are never reused.');
const VARY_ORIGIN = sometimes('Origin, when CORS is on.');

/** What every read (200 and 304) says about the representation and the cache. */
export const READ_HEADERS: Readonly<Record<string, HeaderDoc>> = {
  ETag: always('Strong validator of the body (differs per format); If-None-Match and If-Match take it.'),
  'Cache-Control': always('max-age=<seconds> (60 by default, less when the upstream says so), or no-store.'),
  Age: always('Seconds since the representation was current (RFC 9111 section 5.1).', SECONDS),
  'Cache-Status': always("hypergate's cache: hit, or fwd=miss and what was stored (RFC 9211)."),
  Vary: always('Accept (and Origin when CORS is on).'),
  'X-Request-Id': REQUEST_ID,
};

/** A read's 200 headers: the gateway's, and the upstream's it passes on when the upstream sends them (exposeHeaders). */
export function readHeaders(exposed: readonly string[] | undefined): Readonly<Record<string, HeaderDoc>> {
  if (exposed === undefined) return READ_HEADERS;
  const out: Record<string, HeaderDoc> = { ...READ_HEADERS };
  const passed: HeaderDoc = {
    description: "The upstream service's own, passed on (exposeHeaders) when it sends one.",
    required: false,
    schema: { type: 'string' },
  };
  for (const name of exposed) out[name] = passed;
  return out;
}

/** The headers of a write's success answers, by name: which of them each answer has is in its WriteAnswerDoc. */
export const WRITE_HEADERS = {
  Location: always("The created item's path."),
  ETag: always('The validator of the new representation: the ETag a GET of the item in this format answers with; If-Match takes it.'),
  'Content-Location': always('The item the body represents (RFC 9110 section 8.7).'),
} as const;

/** What a write's 204 carries. */
export const WRITE_COMMON: Readonly<Record<string, HeaderDoc>> = { 'X-Request-Id': REQUEST_ID, Vary: VARY_ORIGIN };
/** What a write's answer with a body carries besides its own headers: it is negotiated by Accept, and not a read to reuse. */
export const WRITE_BODY_COMMON: Readonly<Record<string, HeaderDoc>> = {
  ...WRITE_COMMON,
  'Cache-Control': NO_STORE,
  Vary: always('Accept (and Origin when CORS is on).'),
};

const CHALLENGE = always('The Bearer challenge (RFC 6750 section 3).');
const RETRY_AFTER = always('Whole seconds to wait before trying again.', SECONDS);

/** Header fields problems of these codes always carry (protocol/problem.ts writes them from the error). */
const BY_CODE: Partial<Record<HgErrorCode, Readonly<Record<string, HeaderDoc>>>> = {
  HG_ERR_AUTH_MISSING: { 'WWW-Authenticate': CHALLENGE },
  HG_ERR_AUTH_INVALID_REQUEST: { 'WWW-Authenticate': CHALLENGE },
  HG_ERR_AUTH_INVALID_TOKEN: { 'WWW-Authenticate': CHALLENGE },
  HG_ERR_AUTH_INSUFFICIENT_SCOPE: { 'WWW-Authenticate': CHALLENGE },
  HG_ERR_NOT_OWNER: { 'WWW-Authenticate': CHALLENGE },
  HG_ERR_AUTH_KEYS_UNAVAILABLE: { 'Retry-After': RETRY_AFTER },
  HG_ERR_AUTH_INTROSPECTION_UNAVAILABLE: { 'Retry-After': RETRY_AFTER },
  HG_ERR_UPSTREAM_UNAVAILABLE: { 'Retry-After': RETRY_AFTER },
  HG_ERR_RATE_LIMITED: {
    'Retry-After': RETRY_AFTER,
    'RateLimit-Policy': always('"default";q=<burst>;w=<seconds> (draft-ietf-httpapi-ratelimit-headers).'),
    RateLimit: always('"default";r=0;t=<seconds> (draft-ietf-httpapi-ratelimit-headers).'),
  },
  HG_ERR_METHOD_NOT_ALLOWED: { Allow: always('The methods this path takes.') },
  HG_ERR_UNSUPPORTED_MEDIA_TYPE: {
    'Accept-Post': sometimes('What a POST takes (RFC 9110 section 15.5.16), on a POST.'),
    'Accept-Patch': sometimes('What a PATCH takes (RFC 5789 section 3.1), on a PATCH.'),
    'Accept-Encoding': sometimes('identity, when the body came in a content coding.'),
  },
};

/**
 * The headers of a problem answer of one status that may carry any of `codes`: Cache-Control and
 * the request id always, and each code's own, required only when every code of the status has it.
 */
export function problemHeaders(codes: readonly HgErrorCode[]): Record<string, HeaderDoc> {
  const out: Record<string, HeaderDoc> = { 'Cache-Control': NO_STORE, 'X-Request-Id': REQUEST_ID_OF_PROBLEM, Vary: VARY_ORIGIN };
  for (const code of codes) {
    for (const [name, header] of Object.entries(BY_CODE[code] ?? {})) {
      const everywhere = header.required && codes.every((c) => BY_CODE[c]?.[name] !== undefined);
      out[name] = { ...header, required: everywhere };
    }
  }
  return out;
}

/** The conditional request headers every read takes (RFC 9110 sections 13.1.1 and 13.1.2). */
export const READ_CONDITIONS: readonly ParamDoc[] = [
  {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: '"*" or ETags the client holds: 304 when one is the current ETag (weak comparison).',
    schema: STRING,
  },
  {
    name: 'If-Match',
    in: 'header',
    required: false,
    description: '"*" or ETags: 412 unless one is the current ETag (strong comparison); decided before If-None-Match. A value that is neither is a 400.',
    schema: STRING,
  },
];

/**
 * The headers of the answer to OPTIONS on a path that takes these methods (RFC 9110 section
 * 9.3.7). With CORS on, a preflight from an allowed origin is answered with the Access-Control-*
 * fields instead, so the others are not always there.
 */
export function optionsHeaders(methods: readonly string[], cors: boolean): Record<string, HeaderDoc> {
  const unlessPreflight = (header: HeaderDoc): HeaderDoc => (cors ? { ...header, required: false } : header);
  const out: Record<string, HeaderDoc> = {
    Allow: unlessPreflight(always(`The methods this path takes: ${methods.join(', ')}.`)),
    'Cache-Control': NO_STORE,
    'X-Request-Id': unlessPreflight(REQUEST_ID),
  };
  if (methods.includes('POST')) out['Accept-Post'] = unlessPreflight(always('The media type a POST takes.'));
  if (methods.includes('PATCH')) out['Accept-Patch'] = unlessPreflight(always('The media type a PATCH takes (RFC 5789 section 3.1).'));
  if (cors) {
    out['Vary'] = VARY_ORIGIN;
    out['Access-Control-Allow-Methods'] = sometimes('A CORS preflight from an allowed origin: the methods this path takes.');
    out['Access-Control-Allow-Headers'] = sometimes('A CORS preflight: the request headers a browser may send.');
    out['Access-Control-Max-Age'] = sometimes('A CORS preflight: seconds a browser may keep this answer.', SECONDS);
  }
  return out;
}
