import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { folderEdges, importsOf, LADDER, rungOf, srcFiles, srcFolders, type FolderEdge } from './ladder.ts';

const name = (e: FolderEdge): string => `${e.from} -> ${e.to}`;

/** Folder pairs that reach each other through imports (a cycle), as `a <-> b` with a < b. */
function cycles(edges: readonly FolderEdge[]): string[] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const reach = (from: string): Set<string> => {
    const seen = new Set<string>();
    const walk = (folder: string): void => {
      for (const to of next.get(folder) ?? []) {
        if (seen.has(to)) continue;
        seen.add(to);
        walk(to);
      }
    };
    walk(from);
    return seen;
  };
  const found: string[] = [];
  for (const a of next.keys()) for (const b of reach(a)) if (a < b && reach(b).has(a)) found.push(`${a} <-> ${b}`);
  return found.sort();
}

describe('the folders of src/ form a ladder', () => {
  const edges = folderEdges();

  test('every folder of src/ is on the ladder, once', () => {
    const placed = LADDER.flat();
    assert.deepEqual(
      srcFolders().filter((f) => rungOf(f) === -1),
      [],
    );
    assert.equal(new Set(placed).size, placed.length);
  });

  test('src/ itself holds main.ts alone', () => {
    assert.deepEqual(
      srcFiles().filter((f) => !f.includes('/')),
      ['main.ts'],
    );
  });

  test('no folder imports a folder on its own rung or above it', () => {
    const upward = edges.filter((e) => rungOf(e.to) >= rungOf(e.from)).map((e) => `${name(e)} (${e.file} => ${e.target})`);
    assert.deepEqual(upward, []);
  });

  test('no two folders import each other, directly or round about', () => {
    assert.deepEqual(cycles(edges), []);
  });

  test('the import reader sees static, type-only, re-exported and dynamic imports, and skips packages', () => {
    const text = [
      "import { a } from '../lib/clock.ts';",
      "import type { B } from '../auth/verifier.ts';",
      "export type { C } from './reload.ts';",
      "import './side-effect.ts';",
      "const { serve } = await import('../run/serve.ts');",
      "import { LRUCache } from 'lru-cache';",
    ].join('\n');
    assert.deepEqual(importsOf('gateway/x.ts', text), ['lib/clock.ts', 'auth/verifier.ts', 'gateway/reload.ts', 'gateway/side-effect.ts', 'run/serve.ts']);
  });

  test('an import up the ladder and a cycle are caught', () => {
    const up: FolderEdge = { from: 'lib', to: 'gateway', file: 'lib/x.ts', target: 'gateway/y.ts' };
    const down: FolderEdge = { from: 'gateway', to: 'lib', file: 'gateway/y.ts', target: 'lib/x.ts' };
    assert.ok(rungOf(up.to) >= rungOf(up.from));
    assert.deepEqual(cycles([up, down]), ['gateway <-> lib']);
    const third: FolderEdge = { from: 'lib', to: 'auth', file: 'lib/x.ts', target: 'auth/z.ts' };
    const back: FolderEdge = { from: 'auth', to: 'gateway', file: 'auth/z.ts', target: 'gateway/y.ts' };
    assert.deepEqual(cycles([third, back, down]), ['auth <-> gateway', 'auth <-> lib', 'gateway <-> lib']);
  });
});
