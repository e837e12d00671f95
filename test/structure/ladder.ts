import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export const SRC = resolve(import.meta.dirname, '../../src');

/**
 * The folders of src/ from the lowest rung to the highest (docs/architecture.md draws the same
 * ladder). A folder imports only folders on lower rungs: never one on its own rung, never one
 * above. `.` is src/ itself (main.ts).
 */
export const LADDER: readonly (readonly string[])[] = [
  ['lib'],
  ['config'],
  ['observability'],
  ['protocol', 'hypermedia'],
  ['auth'],
  ['upstream'],
  ['cache'],
  ['cluster'],
  ['resources', 'passthrough'],
  ['embedding'],
  ['openapi'],
  ['http'],
  ['admin', 'sample-upstream'],
  ['gateway'],
  ['run'],
  ['dev', '.'],
];

/** The rung of a folder of src/, or -1 when it is not on the ladder. */
export function rungOf(folder: string): number {
  return LADDER.findIndex((rung) => rung.includes(folder));
}

/** The folders directly inside src/. */
export function srcFolders(): string[] {
  return readdirSync(SRC, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** Every .ts file below src/, as paths relative to src/ with forward slashes. */
export function srcFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return srcFiles(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path).split(sep).join('/')] : [];
  });
}

/** The folder of src/ a file (relative to src/) lies in; `.` for src/ itself. */
export function folderOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? '.' : file.slice(0, slash);
}

/**
 * The files of src/ that `file` imports: static imports and exports (type-only ones too: a type
 * is a dependency all the same) and dynamic import() of a literal path. Packages are left out.
 */
export function importsOf(file: string, text = readFileSync(join(SRC, file), 'utf8')): string[] {
  const targets: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
    const target = relative(SRC, resolve(SRC, dirname(file), m[1] as string))
      .split(sep)
      .join('/');
    targets.push(target);
  }
  return targets;
}

/** One import from a folder into another: `from -> to (file => target)`. */
export interface FolderEdge {
  readonly from: string;
  readonly to: string;
  readonly file: string;
  readonly target: string;
}

/** Every import of src/ that crosses from one folder into another. */
export function folderEdges(): FolderEdge[] {
  const edges: FolderEdge[] = [];
  for (const file of srcFiles()) {
    for (const target of importsOf(file)) {
      const from = folderOf(file);
      const to = folderOf(target);
      if (from !== to) edges.push({ from, to, file, target });
    }
  }
  return edges;
}
