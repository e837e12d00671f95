/**
 * How a hypergate checkout starts, read from its own package.json: the command its `npm start`
 * runs (`[exec] node [flags] <file>`). So the harness runs a build of this checkout's dist/main.js
 * exactly as production does (bench/lib/builds.ts builds it), and an older checkout (no build;
 * `node --import tsx src/main.ts`) the way it started then.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

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
