/** A literal segment of a route template: what an operator may write between parameters. */
const LITERAL_SEGMENT = /^[A-Za-z0-9._~-]+$/;
/** `{name}` (one segment) or `{name*}` (the rest of the path, last only). */
const PARAM_SEGMENT = /^\{([A-Za-z_][A-Za-z0-9_]*)(\*?)\}$/;

/** One segment of a template: literal text, or a parameter that takes one segment or (`rest`) all that follow. */
export type TemplateSegment = { readonly literal: string } | { readonly param: string; readonly rest: boolean };

/**
 * The bytes a parameter's segment may hold: RFC 3986 pchar (unreserved, sub-delims, ":" and "@",
 * and "%" for a percent-encoding, checked apart).
 */
const PCHAR = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@%") PCHAR[c.charCodeAt(0)] = 1;

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

/**
 * Is this one segment of a request path safe to put into an upstream path? Not empty, only pchar,
 * every "%" a whole percent-encoding, and nothing an upstream could decode into a segment of its
 * own: no encoded "/" or "\" (%2F, %5C), no NUL, and no dot-segment, spelled plainly or encoded
 * (".", "..", "%2e%2E"; RFC 3986 section 5.2.4), which a normalising upstream would resolve into a
 * path the route never named.
 */
export function isSafeSegment(segment: string): boolean {
  const length = segment.length;
  if (length === 0) return false;
  let dots = 0;
  let chars = 0;
  for (let i = 0; i < length; i++) {
    let c = segment.charCodeAt(i);
    if (c > 0x7f || PCHAR[c] === 0) return false;
    if (c === 0x25) {
      const high = hexValue(segment.charCodeAt(i + 1));
      const low = hexValue(segment.charCodeAt(i + 2));
      if (high === -1 || low === -1) return false;
      c = high * 16 + low;
      if (c === 0x2f || c === 0x5c || c === 0) return false;
      i += 2;
    }
    chars++;
    if (c === 0x2e) dots++;
  }
  return !(dots === chars && chars <= 2);
}

/**
 * A route's path template, "/api/files/{path*}": literal segments, `{name}` segments and, last, an
 * optional `{name*}` that takes the rest of the path. Matching takes each parameter's raw text as
 * sent (no decoding), so what the upstream gets is what the client wrote, once every segment has
 * been checked by isSafeSegment.
 */
export class RouteTemplate {
  readonly text: string;
  readonly segments: readonly TemplateSegment[];

  private constructor(text: string, segments: readonly TemplateSegment[]) {
    this.text = text;
    this.segments = segments;
  }

  /** Why `text` is not a route template, or null when it is. */
  static problem(text: string): string | null {
    if (!text.startsWith('/')) return 'a path template starts with "/"';
    if (text.includes('?') || text.includes('#')) return "a path template has no query or fragment (the request's query string is passed on as it is)";
    if (text === '/') return null;
    const parts = text.slice(1).split('/');
    const seen = new Set<string>();
    for (const [i, segment] of parts.entries()) {
      const param = PARAM_SEGMENT.exec(segment);
      if (param !== null) {
        const name = param[1] as string;
        if (seen.has(name)) return `the parameter {${name}} appears twice`;
        seen.add(name);
        if (param[2] === '*' && i !== parts.length - 1) return `{${name}*} takes the rest of the path, so it must be the last segment`;
      } else if (segment.includes('{') || segment.includes('}')) {
        return `"${segment}": a parameter is a whole segment, {name} or (last) {name*}, with a name of letters, digits and _`;
      } else if (segment === '') {
        return 'empty segment (a doubled or trailing "/")';
      } else if (!LITERAL_SEGMENT.test(segment)) {
        return `"${segment}": literal segments use only A-Z a-z 0-9 - . _ ~`;
      } else if (segment === '.' || segment === '..') {
        return `"${segment}": a dot-segment, which clients and upstreams remove from a path (RFC 3986 section 5.2.4)`;
      }
    }
    return null;
  }

  static parse(text: string): RouteTemplate {
    const problem = RouteTemplate.problem(text);
    if (problem !== null) throw new Error(`${text}: ${problem}`);
    const segments =
      text === '/'
        ? []
        : text
            .slice(1)
            .split('/')
            .map((s): TemplateSegment => {
              const param = PARAM_SEGMENT.exec(s);
              return param === null ? { literal: s } : { param: param[1] as string, rest: param[2] === '*' };
            });
    return new RouteTemplate(text, segments);
  }

  /** The parameters' names, in path order. */
  get params(): readonly string[] {
    return this.segments.flatMap((s) => ('param' in s ? [s.param] : []));
  }

  /** The rest parameter's name, or null. */
  get rest(): string | null {
    const last = this.segments[this.segments.length - 1];
    return last !== undefined && 'param' in last && last.rest ? last.param : null;
  }

  /** find-my-way's spelling: "/api/files/*", "/api/users/:id/avatar". */
  get route(): string {
    if (this.segments.length === 0) return '/';
    return this.segments.map((s) => ('literal' in s ? `/${s.literal}` : s.rest ? '/*' : `/:${s.param}`)).join('');
  }

  /** OpenAPI's spelling: "/api/files/{path}". */
  get openApiPath(): string {
    if (this.segments.length === 0) return '/';
    return this.segments.map((s) => ('literal' in s ? `/${s.literal}` : `/{${s.param}}`)).join('');
  }

  /**
   * The parameters' raw values when `path` (without query) fits: literals byte for byte, each
   * parameter one safe segment, a rest parameter one or more; null otherwise.
   */
  match(path: string): Map<string, string> | null {
    if (!path.startsWith('/')) return null;
    const parts = path === '/' ? [] : path.slice(1).split('/');
    const values = new Map<string, string>();
    const segments = this.segments;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as TemplateSegment;
      if ('literal' in segment) {
        if (parts[i] !== segment.literal) return null;
        continue;
      }
      const taken = segment.rest ? parts.slice(i) : parts.slice(i, i + 1);
      if (taken.length === 0 || !taken.every(isSafeSegment)) return null;
      values.set(segment.param, taken.join('/'));
      if (segment.rest) return values;
    }
    return parts.length === segments.length ? values : null;
  }

  /** The path with these raw values put in (each checked by match). */
  build(values: ReadonlyMap<string, string>): string {
    if (this.segments.length === 0) return '/';
    return this.segments.map((s) => `/${'literal' in s ? s.literal : (values.get(s.param) ?? '')}`).join('');
  }

  /**
   * Could one request path match both this template and `other`? Literal segments must agree
   * where both have one; a parameter takes any segment, a rest parameter any non-empty rest.
   */
  overlaps(other: RouteTemplate): boolean {
    const a = this.segments;
    const b = other.segments;
    for (let i = 0; ; i++) {
      const x = a[i];
      const y = b[i];
      if (x === undefined || y === undefined) return x === y;
      if (('param' in x && x.rest) || ('param' in y && y.rest)) return true;
      if ('literal' in x && 'literal' in y && x.literal !== y.literal) return false;
    }
  }
}
