import type { QueryParamConfig } from '../config/types.ts';
import { decodeValue, encodeValue, invalidQuery, joinQuery } from './query-text.ts';

/** Names the paging parameters take on the public side: a declared parameter may not. */
export const PAGING_NAMES: readonly string[] = ['limit', 'offset', 'cursor'];

/** A public parameter name: plain text a detail may echo and a URL carries as it is. */
export const QUERY_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/** The integer spelling a query takes: an optional minus, digits, no leading zero ("0" alone). */
const INTEGER = /^-?(0|[1-9][0-9]{0,15})$/;

/**
 * One declared query parameter, compiled: it reads the text a request gives and returns its one
 * canonical spelling (percent-encoded as the gateway writes it), or throws the 400 that names it
 * and says why.
 */
export class QueryParam {
  readonly name: string;
  /** The upstream's name, percent-encoded as it is sent. */
  readonly upstream: string;
  readonly required: boolean;
  readonly list: boolean;
  /** The default's canonical spelling, or null when the parameter has none. */
  readonly fallback: string | null;
  readonly #config: QueryParamConfig;
  /** The declaration as written. */
  get declaration(): QueryParamConfig {
    return this.#config;
  }
  readonly #pattern: RegExp | null;

  /** Throws (a plain Error, for the config check to name) when the declaration cannot work: a bad pattern, a default that does not fit. */
  constructor(name: string, config: QueryParamConfig) {
    this.name = name;
    this.upstream = encodeValue(config.upstream ?? name);
    this.required = config.required;
    this.list = config.list;
    this.#config = config;
    this.#pattern = config.pattern === null ? null : new RegExp(`^(?:${config.pattern})$`, 'u');
    const given = config.default;
    if (given === null) this.fallback = null;
    else {
      const items = Array.isArray(given) ? given : [given];
      if (Array.isArray(given) && !config.list) throw new Error('a list default needs "list": true');
      try {
        this.fallback = this.read(items.map((v) => encodeValue(String(v))).join(','));
      } catch (err) {
        throw new Error(`the default does not fit: ${err instanceof Error && 'detail' in err ? String(err.detail) : String(err)}`, { cause: err });
      }
    }
  }

  /** What the parameter accepts, in words (problems, the OpenAPI description). */
  get rule(): string {
    const c = this.#config;
    const one = ((): string => {
      switch (c.type) {
        case 'integer':
          if (c.min !== null && c.max !== null) return `an integer from ${c.min} to ${c.max}`;
          if (c.min !== null) return `an integer of at least ${c.min}`;
          return c.max === null ? 'an integer' : `an integer of at most ${c.max}`;
        case 'boolean':
          return 'true or false';
        case 'enum':
          return `one of ${(c.values ?? []).join(', ')}`;
        case 'string':
          return `text of 1 to ${c.maxLength} characters${c.pattern === null ? '' : ` matching ${c.pattern}`}`;
      }
    })();
    return c.list ? `a comma-separated list of 1 to ${c.maxItems} values, each ${one}` : one;
  }

  /** The canonical spelling of the raw text a request gives (a list: its items, comma-separated, in order). */
  read(raw: string): string {
    const items = this.list ? raw.split(',') : [raw];
    if (items.length > this.#config.maxItems) throw this.#invalid();
    let out = '';
    for (const item of items) {
      const value = decodeValue(item);
      if (value === null) throw invalidQuery(`Query parameter "${this.name}" is not valid percent-encoded UTF-8.`);
      const canonical = this.#one(value);
      if (canonical === null) throw this.#invalid();
      out = out === '' ? canonical : `${out},${canonical}`;
    }
    return out;
  }

  #invalid(): Error {
    return invalidQuery(`Query parameter "${this.name}" must be ${this.rule}.`);
  }

  /** One value's canonical spelling, or null when it does not fit. */
  #one(value: string): string | null {
    const c = this.#config;
    switch (c.type) {
      case 'integer': {
        if (!INTEGER.test(value)) return null;
        const n = Number(value);
        if (!Number.isSafeInteger(n) || (c.min !== null && n < c.min) || (c.max !== null && n > c.max)) return null;
        return String(n);
      }
      case 'boolean':
        return value === 'true' || value === 'false' ? value : null;
      case 'enum':
        return c.values !== null && c.values.includes(value) ? encodeValue(value) : null;
      case 'string':
        if (value.length === 0 || [...value].length > c.maxLength) return null;
        if (this.#pattern !== null && !this.#pattern.test(value)) return null;
        return encodeValue(value);
    }
  }
}

/** What a request's declared parameters come to: the canonical public query and the upstream's, each `a=b&c=d` or ''. */
export interface QueryText {
  readonly public: string;
  readonly upstream: string;
}

/**
 * The query parameters a collection (or an item) declares, in their canonical order (by name), and
 * the upstream's fixed query. Built once per declaration; `read` runs for each request to a
 * resource that declares any, never for one that declares none.
 */
export class QueryModel {
  readonly params: readonly QueryParam[];
  readonly #byName: ReadonlyMap<string, QueryParam>;

  constructor(declared: Readonly<Record<string, QueryParamConfig>>) {
    this.params = Object.keys(declared)
      .sort()
      .map((name) => new QueryParam(name, declared[name] as QueryParamConfig));
    this.#byName = new Map(this.params.map((p) => [p.name, p]));
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  /** The parameter of this name, or undefined (a link's query value is read by it, as a request's would be). */
  param(name: string): QueryParam | undefined {
    return this.#byName.get(name);
  }

  /** A parameter's declaration as written (the OpenAPI document describes it). */
  declarationOf(name: string): QueryParamConfig {
    const param = this.#byName.get(name);
    if (param === undefined) throw new Error(`no query parameter "${name}"`);
    return param.declaration;
  }

  /** The declared names, in canonical order, for a problem that lists what is taken. */
  get names(): readonly string[] {
    return this.params.map((p) => p.name);
  }

  /**
   * The upstream's query for a canonical public query this model wrote (`read(...).public`), with
   * the fixed query first: an item's load has only its cache key, the canonical spelling, to go by.
   */
  upstreamOf(canonical: string, fixed: string): string {
    let up = '';
    for (const pair of canonical === '' ? [] : canonical.split('&')) {
      const eq = pair.indexOf('=');
      const param = this.#byName.get(pair.slice(0, eq));
      if (param !== undefined) up = joinQuery(up, `${param.upstream}${pair.slice(eq)}`);
    }
    return joinQuery(fixed, up);
  }

  /**
   * The canonical public and upstream query of the given raw values (name → raw text, each name
   * once): every declared parameter that has a value, given or default, in canonical order.
   */
  read(given: ReadonlyMap<string, string>, fixed: string): QueryText {
    let pub = '';
    let up = '';
    for (const param of this.params) {
      const raw = given.get(param.name);
      const value = raw === undefined ? param.fallback : param.read(raw);
      if (value === null) {
        if (param.required) throw invalidQuery(`Query parameter "${param.name}" is required.`);
        continue;
      }
      pub = joinQuery(pub, `${param.name}=${value}`);
      up = joinQuery(up, `${param.upstream}=${value}`);
    }
    return { public: pub, upstream: joinQuery(fixed, up) };
  }
}
