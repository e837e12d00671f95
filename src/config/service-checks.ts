import type { Config, HeaderValue, UpstreamConfig } from './types.ts';
import { isFieldValue } from '../lib/field-value.ts';

/**
 * Headers a service config may not set: the gateway writes them itself (framing, the request id and
 * trace context), and the client's Authorization goes on only through `forwardAuthorization`.
 */
const MANAGED_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'proxy-connection',
  'accept',
  'content-type',
  'x-request-id',
  'traceparent',
  'tracestate',
  'authorization',
]);

/**
 * Request headers a client may never pass on through forwardHeaders: hop-by-hop and framing ones,
 * credentials (Authorization has forwardAuthorization; Cookie never goes), Host, and those the
 * gateway builds itself (forwarded).
 */
const UNFORWARDABLE = new Set([
  ...MANAGED_HEADERS,
  'cookie',
  'proxy-authenticate',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-real-ip',
  'via',
]);

/**
 * Response headers a service may never pass to the client through exposeHeaders: hop-by-hop and
 * framing ones, cookies, and every header the gateway sets itself on a resource's answer (its
 * representation's metadata, freshness and validators, the request id, CORS, authentication
 * challenges and problems' own).
 */
const UNEXPOSABLE = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'set-cookie',
  'set-cookie2',
  'content-type',
  'content-length',
  'content-encoding',
  'content-range',
  'content-location',
  'accept-ranges',
  'cache-control',
  'expires',
  'pragma',
  'etag',
  'last-modified',
  'age',
  'vary',
  'cache-status',
  'date',
  'server',
  'x-request-id',
  'traceparent',
  'tracestate',
  'location',
  'allow',
  'accept-patch',
  'accept-post',
  'accept-encoding',
  'retry-after',
  'www-authenticate',
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-headers',
  'access-control-allow-methods',
  'access-control-expose-headers',
  'access-control-max-age',
  'strict-transport-security',
]);

/** The services by name: "upstream" is the default section, the others come from `upstreams`. */
export function servicesOf(config: Config): ReadonlyMap<string, UpstreamConfig> {
  const services = new Map<string, UpstreamConfig>([['upstream', config.upstream]]);
  for (const [name, service] of Object.entries(config.upstreams)) services.set(name, service);
  return services;
}

/** One instance of a service: where it is and its share of the requests. */
export interface TargetConfig {
  readonly url: string;
  readonly weight: number;
}

/**
 * The targets a service's config names: its `targets`, or its one `url` as a target of weight 1,
 * or none (the default service left unset, for the embedded sample). `url` is the base URL the
 * caller resolved for the service (the embedded sample's for the default one).
 */
export function targetsOf(service: UpstreamConfig, url: string | null): readonly TargetConfig[] {
  if (service.targets.length > 0) return service.targets;
  return url === null ? [] : [{ url, weight: 1 }];
}

/** Whether a service's config names where it is (a `url` or `targets`). */
export function hasAddress(service: UpstreamConfig): boolean {
  return service.url !== null || service.targets.length > 0;
}

/** The value a header config means: its text, or the environment variable's; undefined when that is unset. */
export function headerValueOf(value: HeaderValue, env: NodeJS.ProcessEnv): string | undefined {
  return typeof value === 'string' ? value : env[value.env];
}

/**
 * Names and values of the headers each service adds, checked at start. A value from the
 * environment is never echoed: only the variable's name appears in a problem.
 */
export function checkServices(config: Config, problems: string[], token: RegExp, env: NodeJS.ProcessEnv): void {
  if (Object.hasOwn(config.upstreams, 'upstream'))
    problems.push('upstreams.upstream: "upstream" is the default service (the upstream section); choose another name');
  for (const [name, service] of servicesOf(config)) {
    const at = name === 'upstream' ? 'upstream' : `upstreams.${name}`;
    if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) problems.push(`${at}: a service name starts with a letter and has only letters, digits, - and _`);
    checkTargets(at, name, service, problems);
    const named = (header: string, key: string): void => {
      if (!token.test(header)) problems.push(`${at}.${key}.${header}: not an HTTP header name (RFC 9110 section 5.1)`);
      else if (MANAGED_HEADERS.has(header.toLowerCase()))
        problems.push(
          `${at}.${key}.${header}: the gateway sets this header itself${header.toLowerCase() === 'authorization' ? ' (use forwardAuthorization)' : ''}`,
        );
    };
    for (const [header, value] of Object.entries(service.headers)) {
      named(header, 'headers');
      const text = headerValueOf(value, env);
      const source = typeof value === 'string' ? 'the value' : `the environment variable ${value.env}`;
      if (text === undefined || text === '') problems.push(`${at}.headers.${header}: ${source} is not set`);
      else if (!isFieldValue(text))
        problems.push(`${at}.headers.${header}: ${source} is not a valid header value (no control characters, no leading or trailing space)`);
    }
    const seen = new Set(Object.keys(service.headers).map((h) => h.toLowerCase()));
    for (const header of Object.keys(service.forwardClaims)) {
      named(header, 'forwardClaims');
      if (seen.has(header.toLowerCase())) problems.push(`${at}.forwardClaims.${header}: also set in ${at}.headers`);
    }
    const claimHeaders = new Set(Object.keys(service.forwardClaims).map((h) => h.toLowerCase()));
    for (const header of service.forwardHeaders) {
      const lower = header.toLowerCase();
      if (!token.test(header)) problems.push(`${at}.forwardHeaders: "${header}" is not an HTTP header name (RFC 9110 section 5.1)`);
      else if (UNFORWARDABLE.has(lower))
        problems.push(`${at}.forwardHeaders: "${header}" is never passed on from the client${lower === 'authorization' ? ' (use forwardAuthorization)' : ''}`);
      else if (seen.has(lower) || claimHeaders.has(lower))
        problems.push(`${at}.forwardHeaders: "${header}" is also set in ${at}.headers or ${at}.forwardClaims`);
    }
    const exposed = new Set<string>();
    for (const header of service.exposeHeaders) {
      const lower = header.toLowerCase();
      if (!token.test(header)) problems.push(`${at}.exposeHeaders: "${header}" is not an HTTP header name (RFC 9110 section 5.1)`);
      else if (UNEXPOSABLE.has(lower) || lower.startsWith('access-control-'))
        problems.push(
          `${at}.exposeHeaders: "${header}" is never passed to the client (a hop-by-hop header, a cookie, or one the gateway sets itself on its answers)`,
        );
      else if (exposed.has(lower)) problems.push(`${at}.exposeHeaders: "${header}" is listed more than once`);
      exposed.add(lower);
    }
  }
}

/** `url` or `targets`, not both (the default service may have neither: embedded-sample.ts); targets share a path and are each named once. */
function checkTargets(at: string, name: string, service: UpstreamConfig, problems: string[]): void {
  if (service.url !== null && service.targets.length > 0) problems.push(`${at}.targets: set either ${at}.url or ${at}.targets, not both`);
  if (name !== 'upstream' && !hasAddress(service)) problems.push(`${at}.url: required (or ${at}.targets)`);
  const paths = new Set<string>();
  const seen = new Set<string>();
  for (const target of service.targets) {
    const url = new URL(target.url);
    paths.add(url.pathname.replace(/\/+$/, ''));
    if (seen.has(url.origin)) problems.push(`${at}.targets: ${url.origin} is listed twice`);
    seen.add(url.origin);
  }
  if (paths.size > 1) problems.push(`${at}.targets: every target of a service has the same path (the requests' paths follow it)`);
}
