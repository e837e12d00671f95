/**
 * The servers a benchmark compares, each started as its own process on the server core: the
 * baseline and the Fastify peer (compiled, with hypergate's production Node flags), hypergate
 * (this checkout, or another one for --compare: each built in a folder of its own and started as
 * its own `npm start -- --config FILE` does) and hypergate with Redis. The sample upstream runs in
 * a process of its own on the same core, so the load generator's core stays clean.
 */
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BuiltCheckout, Builds } from './builds.ts';
import { AUDIENCE, ISSUER } from './jwt.ts';
import { freePort, nodeArgv, SERVER_CORE, spawnPinned, stop, waitListening } from './proc.ts';

export interface StartContext {
  readonly upstreamUrl: string;
  readonly publicKeyFile: string;
  /** The baseline's captured answer (capture.ts), written once per harness run. */
  readonly capturePath: string;
  /** The run's scratch folder: config files go there. */
  readonly dir: string;
  /** Where the checkouts are built (bench/lib/builds.ts). */
  readonly builds: Builds;
  readonly accessLog: boolean;
  /** Where a hypergate's stdout (its access log) goes: /dev/null (the default), or a file per start, deleted when it stops. */
  readonly accessLogTo?: 'null' | 'file';
  /** Extra node flags (--cpu-prof ...). */
  readonly nodeFlags?: readonly string[];
  /** The Redis `hypergate-redis` shares (started by run.ts only when that server is measured); emptied before each run. */
  readonly redis?: { readonly url: string; flush(): Promise<void> };
  /** hypergate's server.workers (1 when absent); more than one runs unpinned. */
  readonly workers?: number;
  /** A scenario's own keys (Prepared.hypergateConfig), merged over the minimal config section by section. */
  readonly config?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** A scenario's own environment for hypergate (the secrets its config names). */
  readonly env?: Readonly<Record<string, string>>;
  /** --tracing: hypergate traces, sampling `ratio` of new traces, exporting to `url`. */
  readonly tracing?: { readonly ratio: number; readonly url: string };
}

export interface RunningServer {
  readonly name: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** A hypergate's admin listener (its /metrics: the event loop's delays, loop-delay.ts); absent for the other servers. */
  readonly adminPort?: number;
  /** SIGKILL by default; SIGTERM lets hypergate drain and exit (needed for --cpu-prof). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface ServerSpec {
  readonly name: string;
  start(ctx: StartContext): Promise<RunningServer>;
}

interface Launch {
  readonly argv: string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** A file for its stdout, removed when it stops; /dev/null without. */
  readonly stdoutFile?: string;
}

async function launch(name: string, how: (port: number) => Launch, core: number | null = SERVER_CORE, whenItFails?: () => string): Promise<RunningServer> {
  const port = await freePort();
  const { argv, env = process.env, cwd, stdoutFile } = how(port);
  // stdout (hypergate's access log) is written, as in production, never read: to /dev/null or a file.
  const out = stdoutFile === undefined ? 'ignore' : openSync(stdoutFile, 'w');
  const child = spawnPinned(core, argv, { env, stdio: ['ignore', out, 'pipe'], ...(cwd === undefined ? {} : { cwd }) });
  if (typeof out === 'number') closeSync(out);
  const end = async (signal?: NodeJS.Signals): Promise<void> => {
    await stop(child, signal);
    if (stdoutFile !== undefined) rmSync(stdoutFile, { force: true });
  };
  try {
    await waitListening(child, port, name);
  } catch (err) {
    await end();
    throw whenItFails === undefined ? err : new Error(`${whenItFails()}\n${(err as Error).message}`);
  }
  return { name, port, child, stop: end };
}

/** The parent's environment without HYPERGATE_* variables, so nothing leaks into the config. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HYPERGATE_')));
}

/**
 * The config file every hypergate of a run is started with, one per start (each start has its own
 * port). Minimal, so that older checkouts take it too: the keys a benchmark needs set, every other
 * one left at the checkout's own default. The admin listener is on a free port of its own
 * (`adminPort`; another instance on this machine may hold the default one), for the event loop's
 * delays in /metrics, or off (null). The upstream deadline is one no busy machine runs past: the
 * sample upstream answers in well under a millisecond when the machine is free, so the deadline
 * never shapes a figure, and a smoke run on a loaded machine gets no 504 for its first requests.
 */
export function benchConfig(ctx: StartContext, port: number, adminPort: number | null = null): Record<string, unknown> {
  const config: Record<string, Readonly<Record<string, unknown>>> = {
    server: { port, ...((ctx.workers ?? 1) > 1 ? { workers: ctx.workers } : {}) },
    upstream: { url: ctx.upstreamUrl, timeoutMs: 30_000 },
    auth: { publicKeyFile: ctx.publicKeyFile, issuer: ISSUER, audience: AUDIENCE },
    log: { access: ctx.accessLog },
    admin: { port: adminPort },
    ...(ctx.tracing === undefined ? {} : { tracing: { enabled: true, exporter: { url: ctx.tracing.url } } }),
  };
  for (const [section, keys] of Object.entries(ctx.config ?? {})) config[section] = { ...config[section], ...keys };
  return config;
}

/** The sampler a --tracing run sets: its ratio of new traces (the load sends no traceparent). */
function tracingEnv(ctx: StartContext): Record<string, string> {
  return ctx.tracing === undefined ? {} : { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(ctx.tracing.ratio) };
}

let configs = 0;

/** hypergate from a built checkout, as its `npm start -- --config FILE` runs it, with its admin listener on a free port. */
export async function startCheckout(
  name: string,
  built: BuiltCheckout,
  ctx: StartContext,
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<RunningServer> {
  let file = '';
  let config = '';
  // A cluster's workers share the primary's admin listener: no port of its own for each.
  const adminPort = (ctx.workers ?? 1) > 1 ? null : await freePort();
  const server = await launch(
    name,
    (port) => {
      file = join(ctx.dir, `config-${++configs}.json`);
      config = JSON.stringify(benchConfig(ctx, port, adminPort));
      writeFileSync(file, config);
      const stdoutFile = ctx.accessLogTo === 'file' ? join(ctx.dir, `access-${configs}.log`) : undefined;
      return {
        argv: [process.execPath, ...(ctx.nodeFlags ?? []), ...built.nodeFlags, built.entry, '--config', file],
        env: { ...cleanEnv(), ...tracingEnv(ctx), ...extraEnv, ...ctx.env },
        cwd: built.root,
        ...(stdoutFile === undefined ? {} : { stdoutFile }),
      };
    },
    (ctx.workers ?? 1) > 1 ? null : SERVER_CORE,
    () =>
      `${name} (${built.source}, built in ${built.root}) did not start with the benchmark's config ${config}: if it names a key it does not know, this checkout is too old for the harness (its config/default.json says which keys it has).`,
  );
  return adminPort === null ? server : { ...server, adminPort };
}

/**
 * hypergate from this checkout (`checkout` undefined) or from another one (--compare: a commit
 * or a folder, see Builds.other), built first, configured by the benchmark's config file; an
 * instance's own settings (Redis, admin port, cache sizes) come as HYPERGATE_<SECTION>_<KEY>.
 */
export function hypergate(name = 'hypergate', checkout?: string, extraEnv: Readonly<Record<string, string>> = {}): ServerSpec {
  return {
    name,
    start: async (ctx) => startCheckout(name, checkout === undefined ? await ctx.builds.current() : await ctx.builds.other(checkout), ctx, extraEnv),
  };
}

/** The Fastify peer; `verifyCache` is the size of @fastify/jwt's verify cache, 0 for none. */
function peer(name: string, verifyCache: number): ServerSpec {
  return {
    name,
    start: async (ctx) => {
      const compiled = await ctx.builds.compiledServers();
      return launch(name, (port) => ({
        argv: [
          process.execPath,
          ...(ctx.nodeFlags ?? []),
          ...compiled.nodeFlags,
          compiled.peer,
          String(port),
          ctx.upstreamUrl,
          ctx.publicKeyFile,
          String(verifyCache),
        ],
      }));
    },
  };
}

/**
 * hypergate with redis.url set (docs/operations.md "Running many instances"): every shared feature on, the
 * shared tier emptied before each run so no run inherits another's entries. On `hot` it must
 * match `hypergate`: a local hit never calls Redis.
 */
const withRedis: ServerSpec = {
  name: 'hypergate-redis',
  start: async (ctx) => {
    if (ctx.redis === undefined) throw new Error('hypergate-redis needs a Redis (bench/run.ts starts one when this server is measured)');
    await ctx.redis.flush();
    return hypergate('hypergate-redis', undefined, { HYPERGATE_REDIS_URL: ctx.redis.url }).start(ctx);
  },
};

/** The baseline: bare node:http writing the captured bytes, compiled, with hypergate's production Node flags. */
export const baseline: ServerSpec = {
  name: 'baseline',
  start: async (ctx) => {
    const compiled = await ctx.builds.compiledServers();
    return launch('baseline', (port) => ({
      argv: [process.execPath, ...(ctx.nodeFlags ?? []), ...compiled.nodeFlags, compiled.baseline, String(port), ctx.capturePath],
    }));
  },
};

/**
 * The feature upstream (bench/servers/features.ts) fetched directly, a fresh process per run as
 * every server is: what `download` sets hypergate against. It runs through tsx, as the sample
 * upstream does; a download's cost is the socket's, not the loader's.
 */
export const upstreamDirect: ServerSpec = {
  name: 'upstream-direct',
  start: async () => launch('upstream-direct', (port) => ({ argv: nodeArgv('bench/servers/features.ts', [String(port)]) })),
};

export const SERVERS: Readonly<Record<string, ServerSpec>> = {
  baseline,
  hypergate: hypergate(),
  'hypergate-redis': withRedis,
  fastify: peer('fastify', 0),
  'fastify-cache': peer('fastify-cache', 100_000),
};

export interface Upstream {
  readonly url: string;
  readonly child: ChildProcess;
  /** Requests the upstream has answered so far. */
  count(): Promise<number>;
  stop(): Promise<void>;
}

export async function startUpstream(customers: number): Promise<Upstream> {
  return startCounted('bench/servers/upstream.ts', [String(customers)], 'sample upstream');
}

/**
 * A helper server of the benchmarks (bench/servers/) in its own process on the servers' core,
 * on a free port, counting the requests it answers (reported over IPC).
 */
export async function startCounted(file: string, args: readonly string[], what: string): Promise<Upstream> {
  const port = await freePort();
  const child = spawnPinned(SERVER_CORE, nodeArgv(file, [String(port), ...args]), {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  await waitListening(child, port, what);
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    count: () =>
      new Promise((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`the ${what} did not report its count`)), 5000);
        child.once('message', (m: { requests: number }) => {
          clearTimeout(timer);
          done(m.requests);
        });
        child.send({ type: 'count' });
      }),
    stop: () => stop(child),
  };
}
