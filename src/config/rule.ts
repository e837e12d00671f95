/**
 * The rules a config key may follow, and the builders that write them. A rule is a plain object:
 * the validator, the environment reader, the path resolver and the docs generator all walk it.
 * A rule made by a builder also carries, for the type checker only, the value its key holds once
 * validated, so the `Config` type is read off the schema (types.ts) instead of written again.
 */

/** The unit of a number, shown in the configuration table's Type column. */
export type Unit = 'ms' | 's' | 'bytes';

/** What every rule may say besides its kind. */
interface Described {
  /** One line for the configuration table: what the key does (its type, unit and default have columns of their own). */
  readonly doc?: string;
  /**
   * The value the key takes when it is left out. In config/default.json (written from these) every
   * key has one; inside a named entry (`resources.<name>`, `upstreams.<name>`) a key without one
   * must be set.
   */
  readonly default?: unknown;
}

/** `secret`: the value is never shown, not even in the problem about it (auth.secret; header values). */
export interface StringRule extends Described {
  readonly kind: 'string';
  readonly nullable?: boolean;
  readonly nonEmpty?: boolean;
  readonly oneOf?: readonly string[];
  /**
   * A file or folder: a relative value in a config file means "next to that file", and in
   * config/default.json "in the package" (load.ts resolves every marked key, whatever the cwd).
   */
  readonly path?: boolean;
  readonly secret?: boolean;
  /** What the text is, when more than a string, for the Type column ("template", "JSON pointer"). */
  readonly label?: string;
}

export interface IntegerRule extends Described {
  readonly kind: 'integer';
  readonly min: number;
  readonly max: number;
  readonly nullable?: boolean;
  /** A word the key also takes instead of a number (server.workers: "auto"). */
  readonly orWord?: string;
  readonly unit?: Unit;
}

export interface BooleanRule extends Described {
  readonly kind: 'boolean';
  readonly nullable?: boolean;
}

/** An http(s) URL without credentials, query or fragment. */
export interface UrlRule extends Described {
  readonly kind: 'url';
  readonly nullable?: boolean;
}

/** A Redis URL: redis:// or rediss://, credentials allowed (never echoed: see redactUrl). */
export interface RedisUrlRule extends Described {
  readonly kind: 'redisUrl';
  readonly nullable?: boolean;
}

/** An array of non-empty strings; with `entries`, an entry may also be an object following that section. */
export interface StringsRule extends Described {
  readonly kind: 'strings';
  readonly nullable?: boolean;
  /** The entries are URLs whose credentials are never shown (redis.cluster's seed nodes). */
  readonly urls?: boolean;
  readonly oneOf?: readonly string[];
  readonly nonEmpty?: boolean;
  readonly entries?: SectionRule;
}

/** An object with fixed keys; a key it does not know is a problem with a "did you mean" hint. */
export interface SectionRule extends Described {
  readonly kind: 'section';
  readonly keys: Readonly<Record<string, Rule>>;
  readonly nullable?: boolean;
}

/** An object whose keys the operator names (resources, services, headers); each value follows `values`. */
export interface MapRule extends Described {
  readonly kind: 'map';
  readonly values: Rule;
  /** A null entry removes the key (a shipped resource or link the operator does not want). */
  readonly nullableValues?: boolean;
  /**
   * The one table row for an entry (`upstreams.<name>`), when its keys are documented elsewhere;
   * without it the table has a row for each key of an entry (`resources.<name>.path`, ...).
   */
  readonly entryDoc?: string;
}

/** A header value: a string, or {"env": "NAME"} read from the environment at start. */
export interface HeaderValueRule extends Described {
  readonly kind: 'headerValue';
  readonly nullable?: boolean;
}

/** A JSON scalar (string, number, boolean) or an array of them: a value whose type another key decides (a query parameter's default). */
export interface ScalarRule extends Described {
  readonly kind: 'scalar';
  readonly nullable?: boolean;
}

/** A string following `string`, or an object following `section` (a pointer, or `{"header": ...}`). */
export interface StringOrRule extends Described {
  readonly kind: 'stringOr';
  readonly string: StringRule;
  readonly section: SectionRule;
  readonly nullable?: boolean;
}

/** An array whose every entry follows `items` (an upstream service's targets, the statuses it fails with). */
export interface ListRule extends Described {
  readonly kind: 'list';
  readonly items: Rule;
  readonly nullable?: boolean;
}

/** The rules of one value each; the others hold further rules. */
type LeafRule = StringRule | IntegerRule | BooleanRule | UrlRule | RedisUrlRule | StringsRule | HeaderValueRule | ScalarRule;

export type Rule = LeafRule | SectionRule | MapRule | StringOrRule | ListRule;

/** Type-only: no rule has this key at run time. */
declare const VALUE: unique symbol;

/** A rule that knows, for the type checker, the value its key holds once validated. */
export interface Typed<T> {
  readonly [VALUE]?: T;
}

/** The value a key following `R` holds once validated. */
export type ValueOf<R> = R extends Typed<infer T> ? Exclude<T, undefined> : never;

/** A header value written in the file, or read from an environment variable at start (secrets). */
export type HeaderValue = string | { readonly env: string };

type Nullable<O> = O extends { readonly nullable: true } ? null : never;
type OneOf<O> = O extends { readonly oneOf: readonly (infer V extends string)[] } ? V : string;
type StringValue<O> = OneOf<O> | Nullable<O>;
type IntegerValue<O> = number | Nullable<O> | (O extends { readonly orWord: infer W extends string } ? W : never);
type StringsValue<O> = readonly OneOf<O>[] | Nullable<O>;
type SectionValue<K> = { readonly [P in keyof K]: ValueOf<K[P]> };
type MapValue<V> = Readonly<Record<string, ValueOf<V>>>;
type ListValue<I> = readonly ValueOf<I>[];

/**
 * Each builder's options are its rule without `kind`; `default` must be a value of the rule's own
 * type (a default of null needs `nullable: true`, a default outside `oneOf` does not compile).
 */
type Options<R extends Rule, Given extends keyof R = never> = Omit<R, 'kind' | Given>;

export function string<const O extends Options<StringRule>>(options: O & { readonly default?: StringValue<O> }): StringRule & Typed<StringValue<O>> {
  return { kind: 'string', ...options };
}

/** A string that may not be empty: names, scopes, templates. */
export function nonEmptyString<const O extends Options<StringRule>>(options: O & { readonly default?: StringValue<O> }): StringRule & Typed<StringValue<O>> {
  return { kind: 'string', nonEmpty: true, ...options };
}

/** A file or folder (see StringRule `path`). */
export function path<const O extends Options<StringRule>>(options: O & { readonly default?: StringValue<O> }): StringRule & Typed<StringValue<O>> {
  return { kind: 'string', nonEmpty: true, path: true, ...options };
}

export function integer<const O extends Options<IntegerRule>>(options: O & { readonly default?: IntegerValue<O> }): IntegerRule & Typed<IntegerValue<O>> {
  return { kind: 'integer', ...options };
}

export function boolean<const O extends Options<BooleanRule>>(
  options: O & { readonly default?: boolean | Nullable<O> },
): BooleanRule & Typed<boolean | Nullable<O>> {
  return { kind: 'boolean', ...options };
}

export function url<const O extends Options<UrlRule>>(options: O & { readonly default?: string | Nullable<O> }): UrlRule & Typed<string | Nullable<O>> {
  return { kind: 'url', ...options };
}

export function redisUrl<const O extends Options<RedisUrlRule>>(
  options: O & { readonly default?: string | Nullable<O> },
): RedisUrlRule & Typed<string | Nullable<O>> {
  return { kind: 'redisUrl', ...options };
}

export function strings<const O extends Options<StringsRule>>(options: O & { readonly default?: StringsValue<O> }): StringsRule & Typed<StringsValue<O>> {
  return { kind: 'strings', ...options };
}

/** An array whose entries are each a non-empty string or an object following `entries` (a field, or a field renamed from a pointer). */
export function stringsOr<K extends SectionRule & Typed<unknown>, const O extends Options<StringsRule, 'entries' | 'oneOf'>>(
  entries: K,
  options: O & { readonly default?: readonly (string | ValueOf<K>)[] | Nullable<O> },
): StringsRule & Typed<readonly (string | ValueOf<K>)[] | Nullable<O>> {
  return { kind: 'strings', entries, ...options };
}

export function headerValue<const O extends Options<HeaderValueRule> = { readonly nullable?: false }>(
  options?: O & { readonly default?: HeaderValue | Nullable<O> },
): HeaderValueRule & Typed<HeaderValue | Nullable<O>> {
  return { kind: 'headerValue', ...options };
}

/** A JSON scalar or an array of scalars. */
export type ScalarValue = string | number | boolean | readonly (string | number | boolean)[];

export function scalar<const O extends Options<ScalarRule>>(
  options: O & { readonly default?: ScalarValue | Nullable<O> },
): ScalarRule & Typed<ScalarValue | Nullable<O>> {
  return { kind: 'scalar', ...options };
}

/** A string or an object with fixed keys (each checked by its own rule). */
export function stringOr<
  S extends StringRule & Typed<unknown>,
  K extends SectionRule & Typed<unknown>,
  const O extends Options<StringOrRule, 'string' | 'section'>,
>(text: S, object: K, options: O & { readonly default?: ValueOf<S> | ValueOf<K> | Nullable<O> }): StringOrRule & Typed<ValueOf<S> | ValueOf<K> | Nullable<O>> {
  return { kind: 'stringOr', string: text, section: object, ...options };
}

/** The defaults of a section's keys, as one object; undefined when a key has none (it must be set). */
function defaultsOf(keys: Readonly<Record<string, Rule>>): Readonly<Record<string, unknown>> | undefined {
  const out: Record<string, unknown> = {};
  for (const [key, rule] of Object.entries(keys)) {
    if (rule.default === undefined) return undefined;
    out[key] = rule.default;
  }
  return out;
}

/**
 * A section without a default of its own may still be left out when each of its keys has one
 * (`upstreams.<name>.breaker`): its default is theirs.
 */
export function section<const K extends Readonly<Record<string, Rule>>, const O extends Options<SectionRule, 'keys'> = { readonly nullable?: false }>(
  keys: K,
  options?: O & { readonly default?: SectionValue<K> | Nullable<O> },
): SectionRule & Typed<SectionValue<K> | Nullable<O>> {
  return { kind: 'section', keys, ...options, default: options?.default === undefined ? defaultsOf(keys) : options.default };
}

export function map<const V extends Rule, const O extends Options<MapRule, 'values'>>(
  values: V,
  options: O & { readonly default?: MapValue<V> },
): MapRule & Typed<MapValue<V>> {
  return { kind: 'map', values, ...options };
}

export function list<const I extends Rule, const O extends Options<ListRule, 'items'>>(
  items: I,
  options: O & { readonly default?: ListValue<I> | Nullable<O> },
): ListRule & Typed<ListValue<I> | Nullable<O>> {
  return { kind: 'list', items, ...options };
}
