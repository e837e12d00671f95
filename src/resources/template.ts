import { isDotSegment, parseParam, type ParamType, type ParamValue } from './params.ts';

/** A template's literal segments: what an operator may write between parameters. */
const LITERAL_SEGMENT = /^[A-Za-z0-9._~-]+$/;
const PARAM_SEGMENT = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
/** A link template's parameter may name a nested value with dots (`{brand.id}`, an RFC 6570 varname). */
const DOTTED_PARAM_SEGMENT = /^\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}$/;

/**
 * A path template as resources declare them: "/api/customers/{id}/orders". Each `{name}` is a
 * whole segment; every other segment is literal text of unreserved characters. Compiled once into
 * the literal runs between parameters, so matching a request path is a few `startsWith` calls
 * and building one is a concatenation.
 */
export class PathTemplate {
  readonly text: string;
  /** Parameter names, in path order. */
  readonly params: readonly string[];
  /** The literal runs around the parameters: params.length + 1 of them ('' where none). */
  readonly #literals: readonly string[];

  private constructor(text: string, params: readonly string[], literals: readonly string[]) {
    this.text = text;
    this.params = params;
    this.#literals = literals;
  }

  /** Why `text` is not a path template, or null when it is; `dotted`: parameter names may have dots (a link's, never a route's). */
  static problem(text: string, dotted = false): string | null {
    const paramSegment = dotted ? DOTTED_PARAM_SEGMENT : PARAM_SEGMENT;
    if (!text.startsWith('/')) return 'a path template starts with "/"';
    if (text === '/') return null;
    const seen = new Set<string>();
    for (const segment of text.slice(1).split('/')) {
      const param = paramSegment.exec(segment);
      if (param !== null) {
        const name = param[1] as string;
        if (seen.has(name)) return `the parameter {${name}} appears twice`;
        seen.add(name);
      } else if (segment.includes('{') || segment.includes('}')) {
        return `"${segment}": a parameter is a whole segment, {name}, with a name of letters, digits and _${dotted ? ' (dots between parts name a nested value)' : ''}`;
      } else if (!LITERAL_SEGMENT.test(segment)) {
        return segment === '' ? 'empty segment (a doubled or trailing "/")' : `"${segment}": literal segments use only A-Z a-z 0-9 - . _ ~`;
      } else if (isDotSegment(segment)) {
        return `"${segment}": a dot-segment, which clients and upstreams remove from a path (RFC 3986 section 5.2.4)`;
      }
    }
    return null;
  }

  static parse(text: string, dotted = false): PathTemplate {
    const problem = PathTemplate.problem(text, dotted);
    if (problem !== null) throw new Error(`${text}: ${problem}`);
    const params: string[] = [];
    const literals: string[] = [];
    let run = '';
    for (const segment of text === '/' ? [] : text.slice(1).split('/')) {
      run += '/';
      if (!segment.startsWith('{')) {
        run += segment;
        continue;
      }
      literals.push(run);
      params.push(segment.slice(1, -1));
      run = '';
    }
    literals.push(text === '/' ? '/' : run);
    return new PathTemplate(text, params, literals);
  }

  /** find-my-way's spelling: "/api/customers/:id". */
  get route(): string {
    let out = this.#literals[0] as string;
    for (let i = 0; i < this.params.length; i++) out += `:${this.params[i]}${this.#literals[i + 1]}`;
    return out;
  }

  /** The template with every parameter as "{}": two templates with one shape match the same paths. */
  get shape(): string {
    return this.#literals.join('{}');
  }

  /** Literal segments and parameter slots (null), for prefix comparisons between templates. */
  get segments(): readonly (string | null)[] {
    return this.text === '/'
      ? []
      : this.text
          .slice(1)
          .split('/')
          .map((s) => (s.startsWith('{') ? null : s));
  }

  /**
   * Could a path built from this template be one that `route` answers? Literal segments must agree
   * where both have one; a parameter on either side may take the other's text (the types are not
   * compared here: a value is known only when the path is built).
   */
  mayLeadTo(route: PathTemplate): boolean {
    const mine = this.segments;
    const theirs = route.segments;
    return mine.length === theirs.length && mine.every((segment, i) => segment === null || theirs[i] === null || segment === theirs[i]);
  }

  /** Does a request path fit this template with these parameter types (match without keeping the values)? */
  fits(path: string, types: readonly ParamType[]): boolean {
    return this.match(path, types, []);
  }

  /**
   * Matches a request path (no query) exactly: literal runs byte for byte (no percent-decoding, so
   * only the canonical spelling of a static segment matches), each parameter by its type into
   * `out` (in path order). False when anything does not fit.
   */
  match(path: string, types: readonly ParamType[], out: ParamValue[]): boolean {
    const literals = this.#literals;
    let at = 0;
    for (let i = 0; i < types.length; i++) {
      const literal = literals[i] as string;
      if (!path.startsWith(literal, at)) return false;
      at += literal.length;
      let end = path.indexOf('/', at);
      if (end === -1) end = path.length;
      const value = parseParam(types[i] as ParamType, path.slice(at, end));
      if (value === null) return false;
      out[i] = value;
      at = end;
    }
    const last = literals[types.length] as string;
    return path.length - at === last.length && path.endsWith(last);
  }

  /** The path with these values (in path order) put in. */
  build(values: readonly ParamValue[]): string {
    const literals = this.#literals;
    let out = literals[0] as string;
    for (let i = 0; i < values.length; i++) out += `${values[i]}${literals[i + 1]}`;
    return out;
  }
}
