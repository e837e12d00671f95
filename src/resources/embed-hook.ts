import type { IncomingMessage } from 'node:http';
import type { Principal } from '../auth/verifier.ts';
import { HgError } from '../lib/errors.ts';
import type { SingleFlight } from '../lib/single-flight.ts';
import type { HgResponse } from '../protocol/response.ts';
import type { ParamDoc } from '../protocol/route-doc.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import { callOf } from '../upstream/trace-context.ts';
import type { Access } from './access.ts';
import type { CompiledResource } from './compile.ts';
import type { ItemReaders } from './read-sources.ts';
import type { PartRead, ReadThrough } from './read-through.ts';
import type { ServingParts } from './serving-parts.ts';
import { keyGroups } from './identity.ts';
import type { JsonPointer } from './json-pointer.ts';
import { paramFromValue, type ParamType, type ParamValue } from './params.ts';
import { itemFromRecord } from './record.ts';

/** A declared batch endpoint of a resource's items: its upstream path with `{ids}`, and where the records are in its answer. */
export interface Batch {
  readonly upstream: string;
  readonly items: JsonPointer;
}

/** An item a batch request is to bring: its link's path, its path parameters and its cache key for the caller. */
interface Wanted {
  readonly path: string;
  readonly values: ParamValue[];
  readonly key: string;
}

/** A read route's handler: the request, the answer, and the request's path without its query. */
export type ReadHandler = (req: IncomingMessage, res: HgResponse, path: string) => void | Promise<void>;

/** Where a collection read of `url` is answered from: its read-through and the cache key, for the caller with these claims. */
export type CollectionLocator = (req: IncomingMessage, url: string, path: string, claims: Principal['claims']) => { reader: ReadThrough; key: string };

/** The read paths of a gateway's resources, as their routes use them: what an assembled answer reads its parts through. */
export interface ReadPaths {
  readonly parts: ServingParts;
  readonly items: ItemReaders;
  readonly collections: ReadonlyMap<CompiledResource, CollectionLocator>;
  /** The cache key of the item at `path` (a link's target, no query) for this caller. */
  itemKey(r: CompiledResource, path: string, claims: Principal['claims'], req: IncomingMessage): string;
}

/**
 * Embedding (src/embedding/) plugged into the read routes: it lives above the resources, so the
 * routes are handed it rather than importing it. `handlerFor` is asked once per route when the
 * routes are built; null for a resource (or collection) that declares nothing to embed.
 */
export interface EmbedHook {
  handlerFor(r: CompiledResource, onCollection: boolean, paths: ReadPaths): ReadHandler | null;
  /** The relations `embed` may name first on this route (`items.<rel>` for a collection's members), for its documentation. */
  relationsOf(r: CompiledResource, onCollection: boolean): readonly string[];
}

/** The `embed` query parameter of a route whose resource declares relations to embed, as the OpenAPI document lists it. */
export function embedParamDocs(hook: EmbedHook | null, r: CompiledResource, onCollection: boolean): ParamDoc[] {
  const rels = hook?.relationsOf(r, onCollection) ?? [];
  if (rels.length === 0) return [];
  return [
    {
      name: 'embed',
      in: 'query',
      required: false,
      explode: false,
      description: `Related resources to embed in the answer: comma-separated relation paths, a dot going one relation deeper. Embeddable here: ${rels.join(', ')}. Parts left out or stale are named in the Embed-Status header.`,
      schema: { type: 'array', items: { type: 'string' } },
    },
  ];
}

/** Does this request target (with a query) ask for embedded parts: has it an `embed` parameter? */
export function asksEmbed(url: string): boolean {
  let at = url.indexOf('embed=');
  while (at !== -1) {
    const before = url.charCodeAt(at - 1);
    // '?' or '&' before it: the parameter's name, not the end of another's (`reembed=`).
    if (before === 63 || before === 38) return true;
    at = url.indexOf('embed=', at + 6);
  }
  return false;
}

/**
 * A read handler that hands a request asking for embedded parts (`?embed=`) to `embedded`: a
 * resource that declares nothing to embed keeps its handler as it was, and one that does checks
 * only the target's length on a request without a query.
 */
export function withEmbedding(read: ReadHandler, embedded: ReadHandler | null): ReadHandler {
  if (embedded === null) return read;
  return (req, res, path) => {
    const url = req.url;
    if (url === undefined || url.length === path.length || !asksEmbed(url)) return read(req, res, path);
    return embedded(req, res, path);
  };
}

function routeNotFound(): HgError {
  return new HgError('HG_ERR_ROUTE_NOT_FOUND');
}

/**
 * Reads a declared item or collection page exactly as following its link would: the resource's
 * access rule (scope, owner rule; the rate limit when `access` has one), its identity-aware cache
 * key, and its read-through (single-flight, shared tier, stale-if-error, the service's breaker).
 * What following the link would refuse is thrown as that refusal.
 */
export class ResourceReads {
  readonly #paths: ReadPaths;
  readonly #access: Access;
  readonly #batches: SingleFlight<void>;

  /** `batches`: the batch requests under way, shared by every answer of the gateway. */
  constructor(paths: ReadPaths, access: Access, batches: SingleFlight<void>) {
    this.#paths = paths;
    this.#access = access;
    this.#batches = batches;
  }

  /** The item of `r` at `path` (no query) in format `format`, for the caller of `req`. */
  async item(req: IncomingMessage, requestId: string, r: CompiledResource, path: string, format: number): Promise<PartRead> {
    const values: ParamValue[] = [];
    if (!r.item.match(path, r.types, values)) throw routeNotFound();
    const principal = await (r.public ? this.#access.publicRead(req, r) : this.#access.item(req, r, values));
    const reader = this.#paths.items.get(r);
    if (reader === undefined) throw routeNotFound();
    const key = this.#paths.itemKey(r, path, principal.claims, req);
    return reader.part(key, values, callOf(req, requestId, principal.claims), format);
  }

  /**
   * Fills the cache with the items of `r` at `paths` that this caller may read and that are not
   * fresh in the cache, through one request to a batch endpoint (`batch.upstream` with `{ids}`):
   * each record in its answer is stored as the item itself, under the caller's key, so the reads
   * that follow are hits. Whatever it does not settle (a refusal, a record missing from the answer,
   * the batch request failing) is left to those reads, which answer as following the link would.
   *
   * Batch requests go through single-flight, keyed by the endpoint and the exact set of cache keys
   * it would fill: a concurrent answer missing the same parts under the same keys (so for the same
   * identity wherever the resource varies by it) joins the request under way instead of making its
   * own. Joining is sound because a batch only fills the cache: each part is still read afterwards
   * as following its link would be. Answers missing overlapping but different sets make requests
   * of their own (a batch's ids are its URL; splitting sets to share them would multiply requests).
   */
  async prefetch(req: IncomingMessage, requestId: string, r: CompiledResource, paths: Iterable<string>, batch: Batch): Promise<void> {
    const { ctx } = this.#paths.parts;
    const wanted = new Map<ParamValue, Wanted>();
    let claims: Principal['claims'] | undefined;
    for (const path of paths) {
      const values: ParamValue[] = [];
      if (!r.item.match(path, r.types, values)) continue;
      let principal: Principal;
      try {
        principal = await (r.public ? this.#access.publicRead(req, r) : this.#access.item(req, r, values));
      } catch {
        continue;
      }
      claims = principal.claims;
      const key = this.#paths.itemKey(r, path, principal.claims, req);
      if (ctx.cache.fresh(key, ctx.clock.now()) === undefined) wanted.set(values[values.length - 1] as ParamValue, { path, values, key });
    }
    // One alone is read as following its link would be.
    if (wanted.size < 2) return;
    const keys = [...wanted.values()].map((item) => item.key).sort();
    const flightKey = `${batch.upstream}\u0000${keys.join('\u0000')}`;
    const running = this.#batches.get(flightKey);
    // A batch begun before one of its parts was invalidated may bring what the write replaced: not joined.
    if (
      running !== undefined &&
      ![...wanted.values()].some((item) => ctx.cache.invalidatedSince(item.key, keyGroups(item.key, r.groups(item.values)), running.stamp))
    ) {
      ctx.logger.debug('a batch read of the same embedded parts is under way; joined', { path: batch.upstream });
      return running.promise;
    }
    const ticket = ctx.cache.beginLoad();
    const call = callOf(req, requestId, claims);
    return this.#batches.start(
      flightKey,
      ticket,
      () => this.#batch(r, batch, wanted, call, ticket),
      () => ctx.cache.endLoad(ticket),
    );
  }

  /** One batch request, each record it brings stored as its item; never fails (the reads that follow settle what it did not). */
  async #batch(r: CompiledResource, batch: Batch, wanted: ReadonlyMap<ParamValue, Wanted>, call: UpstreamCall, ticket: number): Promise<void> {
    const { ctx, entries } = this.#paths.parts;
    const ids = [...wanted.keys()].map((id) => encodeURIComponent(String(id))).join(',');
    try {
      const result = await r.service.getJson(batch.upstream.replace('{ids}', ids), call, (json) => batch.items.resolve(json));
      if (!result.found || !Array.isArray(result.value)) return;
      const freshness = entries.upstreamFreshness(result, r.maxAgeSeconds);
      const type = r.types[r.types.length - 1] as ParamType;
      for (const record of result.value as unknown[]) {
        const id = paramFromValue(type, (record as Record<string, unknown> | null)?.[r.identityField]);
        const item = id === null ? undefined : wanted.get(id);
        if (item === undefined) continue;
        const resource = itemFromRecord(r, record, item.values, item.path);
        entries.store(item.key, resource, {
          freshness,
          groups: keyGroups(item.key, r.groups(item.values)),
          embeddedRel: null,
          ticket,
          vary: entries.varyOf(r),
        });
      }
    } catch (err) {
      ctx.logger.debug('a batch read of embedded parts failed; they are read one by one', {
        path: batch.upstream,
        cause: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** The collection of `r` at `path`, with the query of `url` (a page), in format `format`, for the caller of `req`. */
  async collection(req: IncomingMessage, requestId: string, r: CompiledResource, path: string, url: string, format: number): Promise<PartRead> {
    const c = r.collection;
    const locate = this.#paths.collections.get(r);
    const values: ParamValue[] = [];
    if (c === null || locate === undefined || !c.path.match(path, c.types, values)) throw routeNotFound();
    const principal = await (r.public ? this.#access.publicRead(req, r) : this.#access.collection(req, r, values));
    const { reader, key } = locate(req, url, path, principal.claims);
    return reader.part(key, values, callOf(req, requestId, principal.claims), format);
  }
}
