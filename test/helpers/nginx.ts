import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeKey, startJwksServer, type JwksServer, type TestKey } from './keys.ts';
import { startTestUpstream, type TestUpstream } from './upstream.ts';

/** The nginx binary (Debian's package), or null when it is not installed. */
export function findNginx(): string | null {
  for (const candidate of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx']) {
    if (spawnSync(candidate, ['-v']).status === 0) return candidate;
  }
  return null;
}

export interface Nginx {
  readonly child: ChildProcess;
  /** What nginx wrote to stderr (its error log). */
  stderr(): string;
  stop(): void;
}

/** Runs nginx in the foreground with this config text, its prefix (temp files, pid) in `dir`. */
export function startNginx(binary: string, conf: string, dir: string): Nginx {
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  mkdirSync(join(dir, 'logs'), { recursive: true });
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = spawn(binary, ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  return { child, stderr: () => err, stop: () => void child.kill('SIGQUIT') };
}

/** Steps that undo what a test started, run last first. */
export type Closers = (() => Promise<unknown> | void)[];

/** What every test of a deployment example starts first; each part is added to `closers`. */
export interface DeployBasics {
  /** A fresh folder for nginx's prefix and files. */
  readonly dir: string;
  readonly key: TestKey;
  readonly jwks: JwksServer;
  readonly upstream: TestUpstream;
}

export async function startDeployBasics(closers: Closers, name: string): Promise<DeployBasics> {
  const dir = mkdtempSync(join(tmpdir(), `hypergate-${name}-`));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  // nginx's workers run as nobody when the master is root: they must reach the prefix.
  chmodSync(dir, 0o755);
  const key = await makeKey('ES256');
  const jwks = await startJwksServer([key.publicJwk]);
  closers.push(() => jwks.close());
  const upstream = await startTestUpstream();
  closers.push(() => upstream.close());
  return { dir, key, jwks, upstream };
}
