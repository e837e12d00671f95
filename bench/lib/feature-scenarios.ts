/**
 * The scenarios that measure what a feature costs (bench/README.md "Scenarios"): a cache hit on a
 * resource that varies by a claim, one on a collection with query parameters, one with an opaque
 * token cached after introspection, and a download through a pass-through route. Each runs on
 * hypergate alone (no other server here does the same thing), with the keys it needs merged over
 * the minimal config; `download` is set against its upstream fetched directly.
 */
import { mint } from './jwt.ts';
import type { LoadSpec } from './load.ts';
import { ACCEPT, bearer, HOT_PATH, type Counted, type Prepared, type PrepareContext, type Scenario } from './scenarios.ts';

/** The helper server a scenario needs, started by run.ts when a feature scenario runs. */
function need(server: (Counted & { readonly url: string }) | undefined, what: string): Counted & { readonly url: string } {
  if (server === undefined) throw new Error(`this scenario needs the ${what} (bench/run.ts starts it when a feature scenario is selected)`);
  return server;
}

/** A cache hit measured on hypergate alone: the load is also the sample and the warm-up. */
function hit(load: LoadSpec, rest: Partial<Prepared>): Prepared {
  return { load, samples: [load], warm: { load }, herd: false, noRepeat: false, ...rest };
}

const varyClaim: Scenario = {
  name: 'vary-claim',
  about: 'one token with a tenant claim, one customer of a resource that varies by it (vary.claims ["tenant"]): token cached, cache hit',
  prepare: (ctx) => {
    const load = { path: HOT_PATH, headers: bearer(mint(ctx.keys, 'bench-tenant-user', undefined, { tenant: 'tenant-7' })), expect: 200 } as const;
    return hit(load, { hypergateUpstreamRequests: 0, hypergateConfig: { resources: { customers: { vary: { claims: ['tenant'] } } } } });
  },
};

/** The feature upstream as a service, with a deadline no busy machine runs past (as the sample upstream's, servers.ts). */
function featureService(ctx: PrepareContext): Readonly<Record<string, unknown>> {
  return { url: need(ctx.features, 'feature upstream').url, timeoutMs: 30_000 };
}

/** A collection on the feature upstream declaring two query parameters, paged, items cached as accounts. */
function accounts(ctx: PrepareContext): Readonly<Record<string, Readonly<Record<string, unknown>>>> {
  return {
    upstreams: { features: featureService(ctx) },
    resources: {
      accounts: {
        path: '/api/accounts/{id}',
        params: { id: 'integer' },
        upstream: '/accounts/{id}',
        service: 'features',
        fields: ['id', 'name', 'status'],
        fieldTypes: { name: 'string', status: 'string' },
        rel: 'account',
        methods: ['GET'],
        collection: {
          path: '/api/accounts',
          upstream: '/accounts',
          items: '/items',
          total: '/total',
          paged: true,
          query: {
            status: { type: 'enum', values: ['active', 'closed'] },
            sort: { type: 'enum', values: ['id', 'name'], default: 'id' },
          },
        },
      },
    },
  };
}

/** Not in the canonical order (parameters by name, then paging): each request's query is put in order before the cache is asked. */
const QUERY_PATH = '/api/accounts?status=active&sort=name';
const query: Scenario = {
  name: 'query',
  about: `one token, one collection page with declared query parameters in a non-canonical order (${QUERY_PATH}): token cached, cache hit`,
  prepare: (ctx) => {
    const load = { path: QUERY_PATH, headers: bearer(ctx.hotToken), expect: 200 } as const;
    return hit(load, { uncalled: [need(ctx.features, 'feature upstream')], hypergateConfig: accounts(ctx) });
  },
};

const CLIENT_ID = 'HG_BENCH_INTROSPECTION_CLIENT_ID';
const CLIENT_SECRET = 'HG_BENCH_INTROSPECTION_CLIENT_SECRET';
const introspected: Scenario = {
  name: 'introspected',
  about: 'one opaque token, active at the introspection endpoint and cached after the first call, one customer: cache hit (compare with hot)',
  prepare: (ctx) => {
    const endpoint = need(ctx.introspection, 'introspection endpoint');
    const load = { path: HOT_PATH, headers: { ...ACCEPT, authorization: 'Bearer opaque-bench-token-0001' }, expect: 200 } as const;
    return hit(load, {
      hypergateUpstreamRequests: 0,
      uncalled: [endpoint],
      hypergateConfig: {
        auth: { introspection: { url: endpoint.url, clientId: { env: CLIENT_ID }, clientSecret: { env: CLIENT_SECRET }, timeoutMs: 30_000 } },
      },
      env: { [CLIENT_ID]: 'hypergate-bench', [CLIENT_SECRET]: 'bench-secret' },
    });
  },
};

export const DOWNLOAD_BYTES = 64 * 2 ** 20;
/** Downloads at a time: a few long streams, not wrk's 100 connections of small answers. */
const DOWNLOAD_CONNECTIONS = 4;
const download: Scenario = {
  name: 'download',
  about: `${DOWNLOAD_CONNECTIONS} downloads of ${DOWNLOAD_BYTES / 2 ** 20} MB at a time through a pass-through route, against the upstream fetched directly: MB/s and hypergate's peak RSS`,
  prepare: (ctx) => {
    const path = `/api/download/${DOWNLOAD_BYTES}`;
    const load = { path, headers: bearer(ctx.hotToken), expect: 200 } as const;
    // The samples and warm-up fetch a small body through the same route.
    const small = { ...load, path: '/api/download/1024' };
    return {
      ...hit(small, {}),
      load,
      download: { bytes: DOWNLOAD_BYTES, connections: DOWNLOAD_CONNECTIONS, directPath: `/download/${DOWNLOAD_BYTES}` },
      hypergateConfig: {
        upstreams: { features: featureService(ctx) },
        routes: { download: { path: '/api/download/{path*}', service: 'features', upstream: '/download/{path*}' } },
      },
    };
  },
};

export const FEATURE_SCENARIOS: readonly Scenario[] = [varyClaim, query, introspected, download];

/** `download` as the upstream fetched directly answers it: the same body at its own path, no token. */
export function fetchedDirectly(prepared: Prepared): Prepared {
  if (prepared.download === undefined) return prepared;
  const small = { path: '/download/1024', headers: {}, expect: 200 } as const;
  return { ...prepared, load: { path: prepared.download.directPath, headers: {}, expect: 200 }, samples: [small], warm: { load: small } };
}
