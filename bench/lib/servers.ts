/**
 * The servers a benchmark compares, each started as its own process on the server core:
 * the baseline, hypergate (built, and started as its `npm start` does: checkout.ts), the Fastify peer with and
 * without its verify cache, and hypergate from another checkout (--compare). The sample upstream
 * runs in a process of its own on the same core, so the load generator's core stays clean.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { buildOnce, startArgv } from './checkout.ts';
import { AUDIENCE, ISSUER } from './jwt.ts';
import { freePort, nodeArgv, SERVER_CORE, spawnPinned, stop, waitListening } from './proc.ts';

export interface StartContext {
  readonly upstreamUrl: string;
  readonly publicKeyFile: string;
  /** The baseline's captured answer (capture.ts), written once per harness run. */
  readonly capturePath: string;
  readonly accessLog: boolean;
  /** Extra node flags (--cpu-prof ...). */
  readonly nodeFlags?: readonly string[];
  /** The Redis `hypergate-redis` shares (started by run.ts only when that server is measured); emptied before each run. */
  readonly redis?: { readonly url: string; flush(): Promise<void> };
  /** hypergate's server.workers (1 when absent); more than one runs unpinned. */
  readonly workers?: number;
}

export interface RunningServer {
  readonly name: string;
  readonly port: number;
  readonly child: ChildProcess;
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
}

async function launch(name: string, how: (port: number) => Launch, core: number | null = SERVER_CORE): Promise<RunningServer> {
  const port = await freePort();
  const { argv, env = process.env, cwd } = how(port);
  // stdout (hypergate's access log) goes to /dev/null: written, as in production, never read.
  const child = spawnPinned(core, argv, { env, stdio: ['ignore', 'ignore', 'pipe'], ...(cwd === undefined ? {} : { cwd }) });
  try {
    await waitListening(child, port, name);
  } catch (err) {
    await stop(child);
    throw err;
  }
  return { name, port, child, stop: (signal) => stop(child, signal) };
}

/** The parent's environment without HYPERGATE_* variables, so nothing leaks into the config. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HYPERGATE_')));
}

/**
 * hypergate from the checkout in `root`, started as its `npm start` does (this checkout's: the
 * compiled dist/main.js, built first), configured only through HYPERGATE_<SECTION>_<KEY> over
 * config/default.json (admin listener off unless `extraEnv` sets it).
 */
export function hypergate(name = 'hypergate', root = resolve(import.meta.dirname, '../..'), extraEnv: Readonly<Record<string, string>> = {}): ServerSpec {
  if (!existsSync(resolve(root, 'src/config/env.ts'))) return legacyHypergate(name, root);
  return {
    name,
    start: async (ctx) => {
      await buildOnce(root);
      return launch(name, (port) => ({
        argv: startArgv(root, [], ctx.nodeFlags),
        env: {
          ...cleanEnv(),
          HYPERGATE_SERVER_PORT: String(port),
          HYPERGATE_ADMIN_PORT: 'null',
          HYPERGATE_UPSTREAM_URL: ctx.upstreamUrl,
          HYPERGATE_AUTH_PUBLIC_KEY_FILE: ctx.publicKeyFile,
          HYPERGATE_AUTH_ISSUER: ISSUER,
          HYPERGATE_AUTH_AUDIENCE: AUDIENCE,
          HYPERGATE_LOG_ACCESS: String(ctx.accessLog),
          HYPERGATE_SERVER_WORKERS: String(ctx.workers ?? 1),
          ...extraEnv,
        },
        cwd: root,
      }), (ctx.workers ?? 1) > 1 ? null : SERVER_CORE);
    },
  };
}

/**
 * hypergate from a checkout older than the HYPERGATE_<SECTION>_<KEY> variables (before the
 * operations features, which `--compare` measures against): it reads only HYPERGATE_PORT and
 * HYPERGATE_UPSTREAM_URL, so its auth settings go in a config file. It has no access log or
 * admin listener to switch.
 */
function legacyHypergate(name: string, root: string): ServerSpec {
  return {
    name,
    start: async (ctx) => {
      await buildOnce(root);
      const configFile = resolve(dirname(ctx.capturePath), `${name.replace(/[^\w.-]/g, '_')}.config.json`);
      writeFileSync(configFile, JSON.stringify({ auth: { publicKeyFile: ctx.publicKeyFile, issuer: ISSUER, audience: AUDIENCE } }));
      return launch(name, (port) => ({
        argv: startArgv(root, ['--config', configFile], ctx.nodeFlags),
        env: { ...cleanEnv(), HYPERGATE_PORT: String(port), HYPERGATE_UPSTREAM_URL: ctx.upstreamUrl },
        cwd: root,
      }));
    },
  };
}

/** The Fastify peer; `verifyCache` is the size of @fastify/jwt's verify cache, 0 for none. */
function peer(name: string, verifyCache: number): ServerSpec {
  return { name, start: (ctx) => launch(name, (port) => ({ argv: nodeArgv('bench/peers/fastify.ts', [String(port), ctx.upstreamUrl, ctx.publicKeyFile, String(verifyCache)], ctx.nodeFlags) })) };
}

/**
 * hypergate with redis.url set (README "Running many instances"): every shared feature on, the
 * shared tier emptied before each run so no run inherits another's entries. On `hot` it must
 * match `hypergate`: a local hit never calls Redis.
 */
const withRedis: ServerSpec = {
  name: 'hypergate-redis',
  start: async (ctx) => {
    if (ctx.redis === undefined) throw new Error('hypergate-redis needs a Redis (bench/run.ts starts one when this server is measured)');
    await ctx.redis.flush();
    return hypergate('hypergate-redis', resolve(import.meta.dirname, '../..'), { HYPERGATE_REDIS_URL: ctx.redis.url }).start(ctx);
  },
};

export const SERVERS: Readonly<Record<string, ServerSpec>> = {
  baseline: { name: 'baseline', start: (ctx) => launch('baseline', (port) => ({ argv: nodeArgv('bench/servers/baseline.ts', [String(port), ctx.capturePath], ctx.nodeFlags) })) },
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
  const port = await freePort();
  const child = spawnPinned(SERVER_CORE, nodeArgv('bench/servers/upstream.ts', [String(port), String(customers)]), { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  await waitListening(child, port, 'sample upstream');
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    count: () =>
      new Promise((done, fail) => {
        const timer = setTimeout(() => fail(new Error('the sample upstream did not report its count')), 5000);
        child.once('message', (m: { requests: number }) => {
          clearTimeout(timer);
          done(m.requests);
        });
        child.send({ type: 'count' });
      }),
    stop: () => stop(child),
  };
}
