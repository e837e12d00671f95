import type { GatewayContext } from './context.ts';
import type { CursorSeal } from './cursor-seal.ts';
import { EntryStore } from './entry-store.ts';
import { FormatNegotiation } from './format-negotiation.ts';
import { Loads } from './loads.ts';

/** What every resource route of one gateway shares: format negotiation, the entry store, the loads under way and the stale windows. */
export interface ServingParts {
  readonly ctx: GatewayContext;
  readonly formats: FormatNegotiation;
  readonly entries: EntryStore;
  readonly loads: Loads;
  /** cache.staleIfErrorSeconds, in ms. */
  readonly sieMs: number;
  /** cache.staleWhileRevalidateSeconds, in ms. */
  readonly swrMs: number;
  /** Seals and opens the cursors of paging links (paging.cursorSecret). */
  readonly cursors: CursorSeal;
}

export function servingParts(ctx: GatewayContext, cursors: CursorSeal): ServingParts {
  const entries = new EntryStore(ctx);
  return {
    ctx,
    formats: new FormatNegotiation(),
    entries,
    loads: new Loads(ctx),
    sieMs: ctx.config.cache.staleIfErrorSeconds * 1000,
    swrMs: ctx.config.cache.staleWhileRevalidateSeconds * 1000,
    cursors,
  };
}
