import { encodeValue } from './query-text.ts';
import { PathTemplate } from './template.ts';

/** An RFC 6570 varname as link templates take it: letters, digits and _, dots between parts naming a nested value. */
const VARNAME = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * A link template as resources declare them: a path template whose parameters may name nested
 * values (`/api/brands/{brand.id}`), optionally ending in one RFC 6570 form-style query expression
 * (`/api/products{?brand,size}`, section 3.2.8). Its path is built like any path template; the
 * query expression is expanded after it, each variable left out when it is undefined.
 */
export class LinkTemplate {
  readonly text: string;
  readonly path: PathTemplate;
  /** The query expression's variables, in the order written; empty when there is none. */
  readonly query: readonly string[];

  private constructor(text: string, path: PathTemplate, query: readonly string[]) {
    this.text = text;
    this.path = path;
    this.query = query;
  }

  /** The path's parameters, then the query's variables. */
  get params(): readonly string[] {
    return [...this.path.params, ...this.query];
  }

  /** Why `text` is not a link template, or null when it is. */
  static problem(text: string): string | null {
    const { path, query } = LinkTemplate.#split(text);
    if (path.includes('{?') || path.includes('{&')) return 'a query expression {?name,...} comes once, at the end of the template';
    const problem = PathTemplate.problem(path, true);
    if (problem !== null) return problem;
    if (query === null) return null;
    const seen = new Set<string>();
    for (const name of query) {
      if (!VARNAME.test(name))
        return `{?${query.join(',')}}: "${name}" is not a variable name (letters, digits and _, dots between parts; no modifiers such as * or :3)`;
      if (seen.has(name)) return `{?${query.join(',')}}: "${name}" appears twice`;
      seen.add(name);
    }
    return null;
  }

  static parse(text: string): LinkTemplate {
    const problem = LinkTemplate.problem(text);
    if (problem !== null) throw new Error(`${text}: ${problem}`);
    const { path, query } = LinkTemplate.#split(text);
    return new LinkTemplate(text, PathTemplate.parse(path, true), query ?? []);
  }

  /** The path part and the query expression's variables (null without one). */
  static #split(text: string): { path: string; query: string[] | null } {
    const at = text.lastIndexOf('{?');
    if (at === -1 || !text.endsWith('}')) return { path: text, query: null };
    return { path: text.slice(0, at), query: text.slice(at + 2, -1).split(',') };
  }
}

/** A scalar as RFC 6570 expands it, or undefined when it is none (null, an object, a string that is no Unicode text). */
function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') {
    try {
      return encodeValue(value);
    } catch {
      return undefined; // a lone surrogate: no UTF-8 to encode (URIError)
    }
  }
  if (typeof value === 'number') return Number.isFinite(value) ? encodeValue(String(value)) : undefined;
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * One variable's value in a form-style query expression (RFC 6570 section 3.2.8, not exploded):
 * a scalar percent-encoded (only unreserved characters stay); a list as its items joined with
 * commas; an object as its names and values joined with commas. undefined (the variable is left
 * out, section 2.3) for null, an absent value, an empty list or object, or one holding a value
 * that is not a scalar.
 */
export function formValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object') return scalarText(value);
  const parts: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) {
      if (item === null) continue;
      const text = scalarText(item);
      if (text === undefined) return undefined;
      parts.push(text);
    }
  } else {
    for (const [name, item] of Object.entries(value)) {
      if (item === null) continue;
      const text = scalarText(item);
      if (text === undefined) return undefined;
      parts.push(encodeValue(name), text);
    }
  }
  return parts.length === 0 ? undefined : parts.join(',');
}
