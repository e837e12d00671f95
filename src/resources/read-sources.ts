import type { ClaimValue } from '../auth/claims.ts';
import type { CacheEntry } from '../cache/cache-entry.ts';
import type { SharedShape } from '../cluster/entry-adoption.ts';
import { HgError } from '../lib/errors.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import type { CompiledCollection, CompiledResource } from './compile.ts';
import type { EntryStore } from './entry-store.ts';
import type { ParamValue } from './params.ts';
import { identityKey, identityOfKey, keyGroups, pathOfKey } from './identity.ts';
import type { ReadThrough } from './read-through.ts';
import type { PageAsk, UpstreamSpot } from './page-asks.ts';
import { itemFromRecord, pageFromBody } from './record.ts';
import type { Source } from './source.ts';

/** Does the resource take any write (POST, PUT, PATCH, DELETE)? */
function takesWrites(r: CompiledResource): boolean {
  return r.methods.size > (r.methods.has('GET') ? 1 : 0);
}

/** The source of one item: the upstream's record at the item's upstream path, or a cached absence. */
export function itemSource(r: CompiledResource, entries: EntryStore): Source {
  const vary = entries.varyOf(r);
  const suffixes = entries.suffixesOf(r.declaration, vary);
  const source: Source = {
    shared: { fingerprint: r.fingerprint, maxAgeSeconds: r.maxAgeSeconds, embeddedRel: null, suffixes, vary, exposeHeaders: r.service.exposeHeaders },
    takesWrites: takesWrites(r),
    notFound: () => r.notFound(),
    groups: (values) => r.groups(values),
    claimProblem: (claims) => r.service.claimProblem(claims),
    // `key` is the path (with its canonical query, if the item declares one), followed by the
    // identity for a resource that varies (identity.ts).
    load: async (key, values, call, ticket) => {
      const path = pathOfKey(key);
      const result = await r.service.getJson(r.upstream.build(values) + itemQuery(r, path), call, (json) =>
        itemFromRecord(r, r.record.resolve(json), values, path),
      );
      const groups = keyGroups(key, r.groups(values));
      if (!result.found) throw entries.storeAbsent(key, groups, source, ticket);
      const validator = result.etag === null ? null : { upstream: result.etag, suffixes };
      return entries.store(key, result.value, {
        freshness: entries.upstreamFreshness(result, r.maxAgeSeconds),
        groups,
        embeddedRel: null,
        ticket,
        validator,
        vary,
        exposed: result.exposed,
      });
    },
  };
  return source;
}

/**
 * The cache key of the parent item a collection lies below, for the caller of `call`: its own
 * identity's entry when the parent varies, so whether it exists is never answered from another's.
 */
function parentKey(parent: CompiledResource, path: string, call: UpstreamCall): string {
  const vary = parent.vary;
  if (vary === null) return path;
  if (call.request === undefined) throw new Error('a varying resource is read without its request');
  return identityKey(path, vary, call.claims, call.request);
}

/**
 * The upstream query of the item at `path` (its cache key without the identity): the fixed query
 * of its upstream template and, when it declares query parameters, the key's canonical query under
 * the upstream's names. '' for an item that has neither (the shipped ones).
 */
function itemQuery(r: CompiledResource, path: string): string {
  if (r.query === null) return r.fixedQuery === '' ? '' : `?${r.fixedQuery}`;
  const q = path.indexOf('?');
  const text = r.query.upstreamOf(q === -1 ? '' : path.slice(q + 1), r.fixedQuery);
  return text === '' ? '' : `?${text}`;
}

/** The read-through of each declared item, so a collection can ask whether the item it lies below exists. */
export type ItemReaders = ReadonlyMap<CompiledResource, ReadThrough>;

/**
 * The source of one collection page (or the whole unpaged collection); its members fill the item
 * cache. The upstream's 404 for a collection below an item (orders of customer 42) means that
 * item is missing (its own not-found problem) or that it has no such collection: the item is read
 * (usually a cache hit) to say which. For a top-level collection it means the upstream lacks it: 502.
 * A page's source is made per request: a class, so that is one object and no closures.
 */
export class CollectionSource implements Source {
  readonly takesWrites: boolean;
  readonly #r: CompiledResource;
  readonly #c: CompiledCollection;
  readonly #entries: EntryStore;
  readonly #ask: PageAsk | null;
  readonly #items: ItemReaders;

  /** `ask`: the page asked for (its upstream query and links); null for a collection answered whole without declared parameters. */
  constructor(r: CompiledResource, c: CompiledCollection, entries: EntryStore, ask: PageAsk | null, items: ItemReaders) {
    this.takesWrites = takesWrites(r);
    this.#r = r;
    this.#c = c;
    this.#entries = entries;
    this.#ask = ask;
    this.#items = items;
  }

  /** Made when asked for (a miss), so a page's source allocates nothing more on a hit. Pages carry no validator. */
  get shared(): SharedShape {
    const r = this.#r;
    return {
      fingerprint: r.fingerprint,
      maxAgeSeconds: r.maxAgeSeconds,
      embeddedRel: r.name,
      suffixes: null,
      vary: this.#entries.varyOf(r),
      exposeHeaders: r.service.exposeHeaders,
    };
  }

  notFound(): HgError {
    const r = this.#r;
    return this.#c.nested
      ? new HgError('HG_ERR_ROUTE_NOT_FOUND', { detail: `${r.service.who} has no ${r.name} at this path.` })
      : new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail: `${r.service.who} answered 404 for the ${r.name} collection.`, log: { service: r.service.name } });
  }

  groups(values: readonly ParamValue[]): readonly string[] {
    return this.#c.groups(values);
  }

  claimProblem(claims: readonly ClaimValue[] | undefined): HgError | null {
    return this.#r.service.claimProblem(claims);
  }

  async load(key: string, values: readonly ParamValue[], call: UpstreamCall, ticket: number): Promise<CacheEntry> {
    const r = this.#r;
    const c = this.#c;
    const ask = this.#ask;
    const entries = this.#entries;
    const query = ask !== null ? ask.upstreamQuery() : c.fixedQuery === '' ? '' : `?${c.fixedQuery}`;
    const path = c.upstream.build(values);
    const spot: UpstreamSpot = { who: r.service.who, origin: r.service.origin, path: r.service.basePath + path };
    const result = await r.service.getJson(path + query, call, (json, headers) => pageFromBody(r, c, json, headers, values, ask, spot));
    if (!result.found) {
      if (!c.nested) throw this.notFound();
      const parent = c.parent();
      const parentReader = parent === null ? undefined : this.#items.get(parent.resource);
      // Throws the parent's own 404 (customer-not-found) when it is the parent that is missing.
      if (parent !== null && parentReader !== undefined)
        await parentReader.fetch(parentKey(parent.resource, parent.path.build(values), call), parent.path.values(values), call);
      throw entries.storeAbsent(key, keyGroups(key, c.groups(values)), this, ticket);
    }
    const freshness = entries.upstreamFreshness(result, r.maxAgeSeconds);
    const vary = entries.varyOf(r);
    // Following a member's self link is then a cache hit, where that link leads to this resource
    // alone (and for the same identity: its key has the page's).
    const identity = identityOfKey(key);
    if (c.cacheItems) {
      for (const member of result.value.members) {
        if (!c.storesMemberAt(member.path)) continue;
        const memberKey = member.path + identity;
        entries.store(memberKey, member.resource, { freshness, groups: keyGroups(memberKey, r.groups(member.values)), embeddedRel: null, ticket, vary });
      }
    }
    // The page's own headers; a member stored as the item carries none (they were said of the page).
    return entries.store(key, result.value.page, {
      freshness,
      groups: keyGroups(key, c.groups(values)),
      embeddedRel: r.name,
      ticket,
      vary,
      exposed: result.exposed,
    });
  }
}
