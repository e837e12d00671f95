import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
