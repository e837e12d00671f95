import type { Principal } from '../auth/verifier.ts';
import type { GatewayContext } from './context.ts';
import type { IfMatch } from '../protocol/preconditions.ts';
import type { IdempotencyStore } from '../cluster/idempotency.ts';
import type { Access } from './access.ts';
import type { CompiledCollection, CompiledResource } from './compile.ts';
import type { ParamValue } from './params.ts';
import type { ServingParts } from './serving-parts.ts';

export type WriteMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What writes need besides the compiled table. */
export interface WriteDeps {
  readonly ctx: GatewayContext;
  /** Format negotiation and the entry store the reads use: a write's answer is rendered and stored as a read's. */
  readonly parts: ServingParts;
  readonly access: Access;
  readonly idempotency: IdempotencyStore;
  /** Whose subjects the tokens name (auth/realm.ts): Idempotency-Key records are kept per realm. */
  readonly realm: string;
  /**
   * The one invalidation operation: drops these keys and groups here (and, with shared state,
   * on every instance). Writes call it after the upstream changed (or may have changed) the item.
   * The promise (never rejected) settles when the other instances have been told (Redis took the
   * broadcast) or when it could not be within redis.timeoutMs (it is then sent again later).
   */
  readonly invalidate: (keys: readonly string[], groups: readonly string[]) => Promise<unknown>;
}

/** One write route: the resource, the method, and whether it acts on the collection (POST) or an item. */
export interface WriteOp {
  readonly r: CompiledResource;
  readonly method: WriteMethod;
  /** The collection for POST, null for PUT, PATCH, DELETE (they act on an item). */
  readonly collection: CompiledCollection | null;
  /** The render suffixes of the resource's formats (for ETags derived from the upstream's). */
  readonly suffixes: readonly string[];
}

/** A write request that passed its checks: what the later stages send upstream and answer with. */
export interface CheckedWrite {
  /** The path's parameter values, in the route template's order. */
  readonly values: readonly ParamValue[];
  readonly principal: Principal;
  /** Index into FORMATS of the answer (JSON for DELETE, which answers no body). */
  readonly format: number;
  readonly ifMatch: IfMatch | null;
  /** If-None-Match: `*` asks for a create only (RFC 9110 section 13.1.2). */
  readonly ifNoneMatch: IfMatch | null;
  /** If-Unmodified-Since as an IMF-fixdate for the upstream; undefined when absent or ignored (ifUnmodifiedSinceOf). */
  readonly ifUnmodifiedSince: string | undefined;
  /** The body exactly as received (checked); undefined for DELETE. */
  readonly body: Buffer | undefined;
  readonly contentType: string | undefined;
  /** The Idempotency-Key, parsed; null when none was sent or the method takes none (PUT, DELETE). */
  readonly key: string | null;
  /** The Idempotency-Key as the client sent it, for the upstream (so it may dedupe too); undefined when `key` is null. */
  readonly sentKey: string | undefined;
}

/** One write under way after its checks: what every later stage reads. */
export interface WriteRun {
  readonly op: WriteOp;
  readonly deps: WriteDeps;
  /** The request path (canonical: it matched the route's template). */
  readonly path: string;
  readonly checked: CheckedWrite;
  /** The broadcasts of this write's invalidations: its answer waits for them (read-your-write on other instances). */
  readonly published: Promise<unknown>[];
}
