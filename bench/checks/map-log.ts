import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Runs a script of this folder (TypeScript, through tsx) in a child process with V8's map log on,
 * passing `count` as its one argument, and counts the hidden classes made by adding a property, by
 * property name: a name made once per request or per token means objects of one shape each got a
 * map of their own (old-generation garbage, and inline caches that go megamorphic). V8 (Node 20)
 * does this to `{ ...obj, extra }` objects once the code is optimised (bench/RESULTS.md, memory).
 */
export async function hiddenClassesMade(script: string, count: number): Promise<{ readonly stdout: string; readonly madeFor: ReadonlyMap<string, number> }> {
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-maps-'));
  try {
    const log = join(dir, 'maps.log');
    const file = join(import.meta.dirname, script);
    const { stdout } = await run(process.execPath, ['--log-maps', `--logfile=${log}`, '--no-logfile-per-isolate', '--import', 'tsx', file, String(count)], {
      cwd: ROOT,
      timeout: 180_000,
    });
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

/** The count a check script was given (its first argument). */
export function countArgument(): number {
  const count = Number(process.argv[2]);
  if (!Number.isInteger(count) || count < 1) throw new Error(`expected a count as the first argument, got ${process.argv[2]}`);
  return count;
}
