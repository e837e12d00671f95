import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './process.ts';

/** The package as it ships, built fresh in a temporary folder. */
export interface BuiltPackage {
  /** The package folder: package.json, bin/, config/, dist/ and a link to the checkout's node_modules; no src/. */
  readonly root: string;
  /** Its dist/main.js. */
  readonly main: string;
  remove(): void;
}

/**
 * Runs this checkout's `npm run build` with its output in a temporary package folder (never the
 * checkout's own dist/, which may be stale or missing, and which another suite may be writing).
 * Tests of the compiled start use it; as the folder has no src/, nothing in it can fall back to
 * the TypeScript sources. The build only emits (--noCheck): `npm run typecheck` checks the same
 * files, the sources compile with isolatedModules so the JavaScript is the same, and on a busy
 * machine an emit takes a third of the time of a checked build.
 */
export async function buildPackage(timeoutMs = 120_000): Promise<BuiltPackage> {
  const root = mkdtempSync(join(tmpdir(), 'hypergate-built-'));
  try {
    await new Promise<void>((done, fail) => {
      const child = spawn('npm', ['run', '--silent', 'build', '--', '--noCheck', '--outDir', join(root, 'dist')], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) done();
        else fail(new Error(`npm run build exited (${code ?? signal}):\n${out}`));
      });
    });
    copyFileSync(join(ROOT, 'package.json'), join(root, 'package.json'));
    cpSync(join(ROOT, 'config'), join(root, 'config'), { recursive: true });
    cpSync(join(ROOT, 'bin'), join(root, 'bin'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return { root, main: join(root, 'dist/main.js'), remove: () => rmSync(root, { recursive: true, force: true }) };
}
