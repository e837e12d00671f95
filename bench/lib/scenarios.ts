/**
 * The scenarios (bench/README.md "Scenarios"): what each sends, how its servers are warmed, which
 * answers are checked before measuring, and what must hold after it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mint, SCOPE, writeRequestList, type BenchKeys } from './jwt.ts';
import type { LoadSpec } from './load.ts';

export const CUSTOMER = '/api/customers/';
export const HOT_PATH = `${CUSTOMER}42`;
/** Every request says what it wants, as a real client does. */
export const ACCEPT = { accept: 'application/json' } as const;
/** Tokens one fresh-tokens run may use up per second; a run that needs more fails (see `fresh`). */
export const FRESH_RATE_CAP = 15_000;
export const HERD_CONNECTIONS = 1000;
const HERD_CUSTOMER = 31_337;

export interface Sample {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly expect: number;
}

export interface Prepared {
  readonly load: LoadSpec;
  /** Sent once before measuring: every answer must have its expected status. */
  readonly samples: readonly Sample[];
  /** Warm-up: a load for the warm-up time, or a list file each of whose requests is sent once. */
  readonly warm: { readonly load: LoadSpec } | { readonly listFile: string };
  /** The herd driver (1,000 connections, one request each) instead of wrk/autocannon. */
  readonly herd: boolean;
  /** The mixed driver (reads and PATCHes, bench/drivers/mixed.ts) instead of wrk/autocannon: hypergate only (nothing else here takes writes). */
  readonly mixed?: MixedLoad;
  /** Upstream requests hypergate must make during the measured part, when the scenario depends on it (the run fails otherwise). */
  readonly hypergateUpstreamRequests?: number;
  /** A token may not be sent twice to a server that verifies tokens. */
  readonly noRepeat: boolean;
  /**
   * Its If-None-Match is each server's own ETag of the load's path, read just before its samples:
   * servers make ETags differently (hypergate from the upstream's validator, the peer from its body).
   */
  readonly ownEtag?: boolean;
  /** Keys merged over hypergate's minimal config, section by section (older checkouts may not know them), and then hypergate only: the others serve no such thing. */
  readonly hypergateConfig?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** The environment hypergate's config names for this scenario (its secrets). */
  readonly env?: Readonly<Record<string, string>>;
  /** Helper servers hypergate must not call during the measured part (the run fails otherwise): what it needs is cached. */
  readonly uncalled?: readonly Counted[];
  /** The download driver (bench/drivers/download.ts) instead of wrk/autocannon, against hypergate and the upstream fetched directly. */
  readonly download?: DownloadLoad;
}

/** A helper server that counts the requests it answers (servers.ts startCounted). */
export interface Counted {
  readonly what: string;
  count(): Promise<number>;
}

/** Downloads of `bytes` each, `connections` at a time, for the run's duration; `directPath` is the same body on its upstream. */
export interface DownloadLoad {
  readonly bytes: number;
  readonly connections: number;
  readonly directPath: string;
}

/** Reads of customers 1..hotSet with a share of merge PATCHes spread over them, with a token that may write. */
export interface MixedLoad {
  readonly token: string;
  readonly hotSet: number;
  readonly writeShare: number;
}

export interface PrepareContext {
  readonly keys: BenchKeys;
  readonly dir: string;
  readonly seconds: number;
  readonly warmSeconds: number;
  /** The hot token, and the ETag of the hot customer's JSON (from the baseline capture). */
  readonly hotToken: string;
  readonly etag: string;
  /** The feature scenarios' upstream (bench/servers/features.ts) and introspection endpoint, when a feature scenario runs. */
  readonly features?: Counted & { readonly url: string };
  readonly introspection?: Counted & { readonly url: string };
}

export interface Scenario {
  readonly name: string;
  readonly about: string;
  prepare(ctx: PrepareContext): Prepared;
}

export function bearer(token: string): Record<string, string> {
  return { ...ACCEPT, authorization: `Bearer ${token}` };
}

function hotLoad(ctx: PrepareContext, path = HOT_PATH): LoadSpec {
  return { path, headers: bearer(ctx.hotToken), expect: 200 };
}

const hot: Scenario = {
  name: 'hot',
  about: 'one valid ES256 token, one customer: token cached, cache hit',
  prepare: (ctx) => ({
    load: hotLoad(ctx),
    samples: [{ path: HOT_PATH, headers: bearer(ctx.hotToken), expect: 200 }],
    warm: { load: hotLoad(ctx) },
    herd: false,
    noRepeat: false,
  }),
};

const TOKENS = 10_000;
const TOKEN_CUSTOMERS = 1000;
const tokens: Scenario = {
  name: 'tokens',
  about: `${TOKENS.toLocaleString('en')} distinct valid tokens in rotation over ${TOKEN_CUSTOMERS.toLocaleString('en')} customers, all verified and cached in the warm-up`,
  prepare: (ctx) => {
    const file = join(ctx.dir, 'tokens.txt');
    writeRequestList(file, ctx.keys, TOKENS, (i) => ({ path: `${CUSTOMER}${(i % TOKEN_CUSTOMERS) + 1}`, sub: `user-${i}` }));
    const load: LoadSpec = { path: HOT_PATH, headers: ACCEPT, list: { kind: 'file', file, random: false }, expect: 200 };
    return {
      load,
      samples: [{ path: `${CUSTOMER}7`, headers: bearer(mint(ctx.keys, 'user-sample')), expect: 200 }],
      warm: { listFile: file },
      herd: false,
      noRepeat: false,
    };
  },
};

const fresh: Scenario = {
  name: 'fresh-tokens',
  about: 'a token never seen before on every request (pre-minted pool): the cost of ES256 verification itself',
  prepare: (ctx) => {
    const file = join(ctx.dir, 'fresh.txt');
    const warmFile = join(ctx.dir, 'fresh-warm.txt');
    writeRequestList(file, ctx.keys, Math.ceil(FRESH_RATE_CAP * ctx.seconds), (i) => ({ path: HOT_PATH, sub: `fresh-${i}` }));
    writeRequestList(warmFile, ctx.keys, Math.min(20_000, Math.ceil(FRESH_RATE_CAP * ctx.warmSeconds)), (i) => ({ path: HOT_PATH, sub: `warm-${i}` }));
    const load: LoadSpec = { path: HOT_PATH, headers: ACCEPT, list: { kind: 'file', file, random: false }, expect: 200 };
    return {
      load,
      samples: [{ path: HOT_PATH, headers: bearer(mint(ctx.keys, 'fresh-sample')), expect: 200 }],
      warm: { load: { ...load, list: { kind: 'file', file: warmFile, random: false } } },
      herd: false,
      noRepeat: true,
    };
  },
};

const SPREAD_CUSTOMERS = 100_000;
const spread: Scenario = {
  name: 'spread',
  about: `${SPREAD_CUSTOMERS.toLocaleString('en')} customers at random: cache misses, upstream round trips, evictions`,
  prepare: (ctx) => {
    const ids = { kind: 'ids', count: SPREAD_CUSTOMERS, prefix: CUSTOMER, token: ctx.hotToken } as const;
    const load: LoadSpec = { path: HOT_PATH, headers: ACCEPT, list: { ...ids, seed: 2 }, expect: 200 };
    return {
      load,
      samples: [{ path: `${CUSTOMER}${SPREAD_CUSTOMERS}`, headers: bearer(ctx.hotToken), expect: 200 }],
      warm: { load: { ...load, list: { ...ids, seed: 1 } } },
      herd: false,
      noRepeat: false,
    };
  },
};

const WIDE_CUSTOMERS = 10_000;
const wide: Scenario = {
  name: 'wide',
  about: `one token, ${WIDE_CUSTOMERS.toLocaleString('en')} customers at random, each read once in the warm-up: every answer a cache hit among many entries`,
  prepare: (ctx) => {
    const file = join(ctx.dir, 'wide.txt');
    writeFileSync(file, Array.from({ length: WIDE_CUSTOMERS }, (_, i) => `${CUSTOMER}${i + 1} ${ctx.hotToken}\n`).join(''));
    const load: LoadSpec = {
      path: HOT_PATH,
      headers: ACCEPT,
      list: { kind: 'ids', count: WIDE_CUSTOMERS, prefix: CUSTOMER, token: ctx.hotToken, seed: 3 },
      expect: 200,
    };
    return {
      load,
      samples: [{ path: `${CUSTOMER}${WIDE_CUSTOMERS}`, headers: bearer(ctx.hotToken), expect: 200 }],
      warm: { listFile: file },
      herd: false,
      noRepeat: false,
      hypergateUpstreamRequests: 0,
    };
  },
};

const conditional: Scenario = {
  name: 'conditional',
  about: 'If-None-Match with the current ETag: 304 Not Modified, no body',
  prepare: (ctx) => {
    const load: LoadSpec = { path: HOT_PATH, headers: { ...bearer(ctx.hotToken), 'if-none-match': ctx.etag }, expect: 304 };
    return { load, samples: [{ path: HOT_PATH, headers: load.headers, expect: 304 }], warm: { load }, herd: false, noRepeat: false, ownEtag: true };
  },
};

const herd: Scenario = {
  name: 'herd',
  about: `${HERD_CONNECTIONS.toLocaleString('en')} connections ask for one uncached customer at once: hypergate must ask its upstream once`,
  prepare: (ctx) => ({
    load: hotLoad(ctx, `${CUSTOMER}${HERD_CUSTOMER}`),
    // Samples and warm-up use another customer, so the herd's customer is still uncached.
    samples: [{ path: `${CUSTOMER}1`, headers: bearer(ctx.hotToken), expect: 200 }],
    warm: { load: hotLoad(ctx, `${CUSTOMER}1`) },
    herd: true,
    noRepeat: false,
    hypergateUpstreamRequests: 1,
  }),
};

const MIXED_HOT_SET = 100;
const MIXED_WRITE_SHARE = 0.05;
const mixed: Scenario = {
  name: 'mixed',
  about: `${100 - MIXED_WRITE_SHARE * 100}% reads of ${MIXED_HOT_SET} customers, ${MIXED_WRITE_SHARE * 100}% merge PATCHes spread over them (hypergate only): reads/s, writes/s, the share of reads from cache, and reads older than an acknowledged write (must be 0)`,
  prepare: (ctx) => {
    const token = mint(ctx.keys, 'bench-writer', `${SCOPE} customers:write`);
    const reads: LoadSpec = {
      path: `${CUSTOMER}1`,
      headers: ACCEPT,
      list: { kind: 'ids', count: MIXED_HOT_SET, prefix: CUSTOMER, token, seed: 4 },
      expect: 200,
    };
    return {
      load: reads,
      samples: [{ path: `${CUSTOMER}${MIXED_HOT_SET}`, headers: bearer(token), expect: 200 }],
      // Reads only: every hot customer cached before the measured part.
      warm: { load: reads },
      herd: false,
      noRepeat: false,
      mixed: { token, hotSet: MIXED_HOT_SET, writeShare: MIXED_WRITE_SHARE },
    };
  },
};

/** The customers declared to embed their orders (`?embed=items.orders` on a page of customers). */
const EMBED_CONFIG = { resources: { customers: { embed: { orders: { target: 'orders', kind: 'collection' } } } } };
const EMBED_PAGE = '/api/customers?offset=0&limit=20';

const embed: Scenario = {
  name: 'embed',
  about:
    'a page of 20 customers each embedding its orders (21 cached parts) in one request (hypergate only): compare with embed-parts, the 21 requests it replaces',
  prepare: (ctx) => {
    const load = hotLoad(ctx, `${EMBED_PAGE}&embed=items.orders`);
    return { load, samples: [{ ...load }], warm: { load }, herd: false, noRepeat: false, hypergateUpstreamRequests: 0, hypergateConfig: EMBED_CONFIG };
  },
};

const embedParts: Scenario = {
  name: 'embed-parts',
  about:
    "the 21 requests a client makes without embed (the page of 20 customers, then each one's orders), all cached, in turn (hypergate only): 21 of them cost one embed page",
  prepare: (ctx) => {
    const file = join(ctx.dir, 'embed-parts.txt');
    const paths = [EMBED_PAGE, ...Array.from({ length: 20 }, (_, i) => `${CUSTOMER}${i + 1}/orders`)];
    writeFileSync(file, paths.map((path) => `${path} ${ctx.hotToken}\n`).join(''));
    const load: LoadSpec = { path: EMBED_PAGE, headers: ACCEPT, list: { kind: 'file', file, random: false }, expect: 200 };
    return {
      load,
      samples: [{ path: EMBED_PAGE, headers: bearer(ctx.hotToken), expect: 200 }],
      warm: { listFile: file },
      herd: false,
      noRepeat: false,
      hypergateUpstreamRequests: 0,
      hypergateConfig: EMBED_CONFIG,
    };
  },
};

/** Composite pages asked in turn per measured second; past them the list starts over and every part is cached. */
const MISS_PAGES_PER_SECOND = 1500;
/** The last page offset the sample's 100,000 customers fill. */
const MISS_LAST_OFFSET = 99_980;

const embedMiss: Scenario = {
  name: 'embed-miss',
  about:
    "the embed page with one part missing from the cache: pages of 20 customers one offset apart, each embedding its customers' orders, asked in turn, so each finds the page and 19 of its parts cached and reads the newest customer's orders from the upstream (hypergate only): compare with embed",
  prepare: (ctx) => {
    const pages = Math.min(MISS_LAST_OFFSET, Math.max(1000, Math.ceil(MISS_PAGES_PER_SECOND * ctx.seconds)));
    const page = (offset: number): string => `${CUSTOMER.slice(0, -1)}?offset=${offset}&limit=20`;
    // Warm-up: every page alone (the composite reads its page under the same key), then the first composite (customers 1..20's orders).
    const warmFile = join(ctx.dir, 'embed-miss-warm.txt');
    const warm = Array.from({ length: pages + 1 }, (_, offset) => `${page(offset)} ${ctx.hotToken}\n`);
    warm.push(`${page(0)}&embed=items.orders ${ctx.hotToken}\n`);
    writeFileSync(warmFile, warm.join(''));
    // Measured: page k needs the orders of customers k+1..k+20, of which page k-1 brought all but k+20's.
    const file = join(ctx.dir, 'embed-miss.txt');
    writeFileSync(file, Array.from({ length: pages }, (_, i) => `${page(i + 1)}&embed=items.orders ${ctx.hotToken}\n`).join(''));
    const load: LoadSpec = { path: `${page(1)}&embed=items.orders`, headers: ACCEPT, list: { kind: 'file', file, random: false }, expect: 200 };
    return {
      load,
      samples: [{ path: `${EMBED_PAGE}&embed=items.orders`, headers: bearer(ctx.hotToken), expect: 200 }],
      warm: { listFile: warmFile },
      herd: false,
      noRepeat: false,
      hypergateConfig: EMBED_CONFIG,
    };
  },
};

/** The scenarios on the shipped customers resource (feature-scenarios.ts has the others). */
export const CUSTOMER_SCENARIOS: readonly Scenario[] = [hot, tokens, fresh, spread, wide, conditional, herd, mixed, embed, embedParts, embedMiss];
