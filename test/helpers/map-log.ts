import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = resolve(import.meta.dirname, '../..');

/** An import line for a module of src/ (absolute: the script runs from a temporary folder). */
export const importFromSrc = (names: string, path: string): string => `import { ${names} } from ${JSON.stringify(join(ROOT, 'src', path))};`;

/**
 * Runs an ES module (TypeScript, through tsx) in a child process with V8's map log on, and counts
 * the hidden classes made by adding a property, by property name: a name made once per request or
 * per token means objects of one shape each got a map of their own (old-generation garbage, and
 * inline caches that go megamorphic). V8 (Node 20) does this to `{ ...obj, extra }` objects once
 * the code is optimised (bench/RESULTS.md, memory).
 */
export async function hiddenClassesMade(lines: readonly string[]): Promise<{ readonly stdout: string; readonly madeFor: ReadonlyMap<string, number> }> {
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-maps-'));
  try {
    const script = join(dir, 'script.mts');
    const log = join(dir, 'maps.log');
    writeFileSync(script, lines.join('\n'));
    const { stdout } = await run(process.execPath, ['--log-maps', `--logfile=${log}`, '--no-logfile-per-isolate', '--import', 'tsx', script], { cwd: ROOT, timeout: 90_000 });
    // "map,Transition,<time>,<from>,<to>,<pc>,<line>,<column>,<reason>,<property name>"
    const madeFor = new Map<string, number>();
    for (const line of readFileSync(log, 'latin1').split('\n')) {
      if (!line.startsWith('map,Transition,')) continue;
      const name = line.slice(line.lastIndexOf(',') + 1);
      madeFor.set(name, (madeFor.get(name) ?? 0) + 1);
    }
    return { stdout, madeFor };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Fails unless the log recorded transitions and no property name made a new hidden class once in ten `times` or more. */
export function assertNoHiddenClassPer(madeFor: ReadonlyMap<string, number>, times: number, what: string): void {
  assert.ok(madeFor.size > 0, 'the map log records transitions');
  const often = [...madeFor].filter(([, count]) => count >= times / 10);
  assert.deepEqual(often, [], `property names that made a new hidden class for many ${what}`);
}
