import type { ClaimValue } from '../auth/claims.ts';
import type { CacheEntry } from '../cache/cache-entry.ts';
import type { SharedShape } from '../cluster/entry-adoption.ts';
import type { HgError } from '../lib/errors.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import type { ParamValue } from './params.ts';

/** Where a read route's resources come from on a miss, and what a cached absence answers. */
export interface Source {
  /**
   * Loads the resource at `path` (its parameter `values`, in path order), stores it through the
   * entry store and returns its entry. `ticket` is the cache's load ticket (ResponseCache.beginLoad).
   */
  load(path: string, values: readonly ParamValue[], call: UpstreamCall, ticket: number): Promise<CacheEntry>;
  /** The invalidation groups the entry at `path` belongs to (what `load` stores it with). */
  groups(values: readonly ParamValue[]): readonly string[];
  /** The 404 a cached absence (the upstream's 404, kept cache.notFoundSeconds) answers with. */
  notFound(): HgError;
  /**
   * The 400 when the caller's kept claims cannot be forwarded to this source's service, else null:
   * asked before a load is started or joined, so a load never fails for one caller's claim.
   */
  claimProblem?(claims: readonly ClaimValue[] | undefined): HgError | null;
  /** Made by the gateway itself (the API root): a miss waits for no upstream, and the access line says none. */
  readonly local?: boolean;
  /**
   * What its entries look like, to check one read from the shared tier (Redis) before adopting it;
   * absent for a source whose entries never go through the tier (the API root: rendering it here
   * is cheaper than asking Redis, and only this instance's table says what it is).
   */
  readonly shared?: SharedShape;
  /** Its resource takes writes (another instance may change what it caches): see hearing.ts. */
  readonly takesWrites?: boolean;
}
