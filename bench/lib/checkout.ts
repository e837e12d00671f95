/**
 * How a hypergate checkout starts, read from its own package.json: the command its `npm start`
 * runs (`[exec] node [flags] <file>`), after its `npm run build` when it has one. So the harness
 * runs this checkout's compiled dist/main.js exactly as production does, and an older checkout
 * (no build; `node --import tsx src/main.ts`) the way it started then.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { collect, spawnPinned } from './proc.ts';

interface PackageJson {
  readonly scripts?: Readonly<Record<string, string>>;
}

function scriptsOf(root: string): Readonly<Record<string, string>> {
  return (JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as PackageJson).scripts ?? {};
}

/** A word of a start script we can run without a shell: no quoting, variables or operators. */
const PLAIN_WORD = /^[\w@./:=+-]+$/;

/** The node flags and the entry file (absolute) of `npm start` in `root`. */
export function startCommand(root: string): { readonly nodeFlags: readonly string[]; readonly entry: string } {
  const script = scriptsOf(root)['start'] ?? '';
  const words = script.trim().split(/\s+/);
  if (words[0] === 'exec') words.shift();
  const entry = words.at(-1) ?? '';
  if (words[0] !== 'node' || words.length < 2 || !words.every((w) => PLAIN_WORD.test(w)) || !/\.[cm]?[jt]s$/.test(entry)) {
    throw new Error(`${root}: cannot start it as npm start does: its start script ${JSON.stringify(script)} is not "[exec] node [flags] <file>"`);
  }
  return { nodeFlags: words.slice(1, -1), entry: resolve(root, entry) };
}

const builds = new Map<string, Promise<void>>();

/** `npm run build` in `root` once per harness run, when it has that script: no run measures a stale dist/. */
export function buildOnce(root: string, timeoutMs = 300_000): Promise<void> {
  let build = builds.get(root);
  if (build === undefined) {
    build = scriptsOf(root)['build'] === undefined ? Promise.resolve() : collect(spawnPinned(null, ['npm', 'run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }), `npm run build in ${root}`, timeoutMs).then(() => undefined);
    builds.set(root, build);
  }
  return build;
}

/** The argv that starts the gateway of `root` as its `npm start` does (after `buildOnce`), with extra node flags and arguments. */
export function startArgv(root: string, args: readonly string[] = [], nodeFlags: readonly string[] = []): string[] {
  const start = startCommand(root);
  return [process.execPath, ...nodeFlags, ...start.nodeFlags, start.entry, ...args];
}
