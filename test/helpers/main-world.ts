import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mergeConfig } from '../../src/config/load.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey } from './keys.ts';
import { freePort, startMain, type MainProcess } from './main-process.ts';
import { startTestUpstream, type TestUpstream } from './upstream.ts';

/** A real hypergate process (or cluster) with its own key, JWKS, test upstream and config file. */
export interface MainWorld {
  readonly key: TestKey;
  readonly jwks: JwksServer;
  readonly upstream: TestUpstream;
  readonly main: MainProcess;
  /** The config file the process was started with (and rereads on a reload). */
  readonly file: string;
  /** http://127.0.0.1:<public port> */
  readonly base: string;
  /** http://127.0.0.1:<admin port> */
  readonly admin: string;
  /** A token with the admin scope. */
  readonly adminToken: string;
  /** The pids of the processes that logged they listen (the workers, or the one process). */
  servingPids(): number[];
  /** Rewrites the config file: the settings it started with, `extra` merged over them. */
  write(extra: Record<string, unknown>): void;
  close(): Promise<void>;
}

/**
 * Starts `src/main.ts --config <dir>/<name>.json` on free ports with `workers` workers (1: no
 * cluster), the admin listener on, access lines off, and `extra` merged over that config; resolves
 * once the admin listener and every worker listen.
 */
export async function startMainWorld(
  dir: string,
  name: string,
  options: { workers?: number; extra?: Record<string, unknown>; env?: Record<string, string> } = {},
): Promise<MainWorld> {
  const workers = options.workers ?? 1;
  const key = await makeKey('ES256');
  const jwks = await startJwksServer([key.publicJwk]);
  const upstream = await startTestUpstream();
  const port = await freePort();
  const adminPort = await freePort();
  const file = join(dir, `${name}.json`);
  const own = {
    server: { port, workers, drainTimeoutMs: 1000 },
    admin: { port: adminPort },
    upstream: { url: upstream.url },
    auth: { jwksUrl: jwks.url },
    log: { access: false },
  };
  const started = mergeConfig(own, options.extra ?? {});
  const write = (extra: Record<string, unknown>): void => writeFileSync(file, JSON.stringify(mergeConfig(started, extra)));
  write({});
  const main = startMain(['--config', file], options.env);
  const servingPids = (): number[] => main.records.filter((r) => r['event'] === 'listening').map((r) => r['pid'] as number);
  const close = async (): Promise<void> => {
    main.kill('SIGKILL');
    await main.exited();
    // Workers end with their primary; one that has not yet is not left behind.
    for (const pid of servingPids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await upstream.close();
    await jwks.close();
  };
  try {
    await main.waitFor((r) => r['event'] === 'admin-listening');
    if (workers === 1) await main.waitFor((r) => r['event'] === 'listening');
    else for (let n = 1; n <= workers; n++) await main.waitFor((r) => r['event'] === 'listening' && r['worker'] === n);
  } catch (err) {
    await close();
    throw err;
  }
  const adminToken = await signToken(key, { claims: { scope: 'hypergate:admin' } });
  return { key, jwks, upstream, main, file, base: `http://127.0.0.1:${port}`, admin: `http://127.0.0.1:${adminPort}`, adminToken, servingPids, write, close };
}
