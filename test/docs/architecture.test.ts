import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { LADDER, SRC, srcFiles, srcFolders } from '../structure/ladder.ts';

const PAGE = readFileSync(resolve(SRC, '../docs/architecture.md'), 'utf8');

/** The text of the section under this `## ` heading. */
function section(heading: string): string {
  const start = PAGE.indexOf(`\n## ${heading}\n`);
  assert.notEqual(start, -1, `docs/architecture.md has a section "${heading}"`);
  const end = PAGE.indexOf('\n## ', start + 1);
  return PAGE.slice(start, end === -1 ? undefined : end);
}

/** The numbered items of the ladder: each item's text, its lines joined. */
function rungItems(): string[] {
  const items: string[] = [];
  for (const line of section('The ladder').split('\n')) {
    if (/^\d+\. /.test(line)) items.push(line);
    else if (/^\s+\S/.test(line) && items.length > 0 && line.trim() !== '') items[items.length - 1] += ` ${line.trim()}`;
    else if (line.trim() === '' && items.length > 0) items.push('');
  }
  return items.filter((item) => item !== '');
}

/** The folders a rung names before its colon: `src/lib/` is lib, `src/main.ts` is src/ itself. */
function foldersOf(item: string): string[] {
  const head = item.slice(0, item.indexOf(':'));
  return [...head.matchAll(/`src\/([^`]*)`/g)].map((m) => (m[1] === 'main.ts' ? '.' : (m[1] as string).replace(/\/$/, '')));
}

const lineCount = (file: string): number => {
  const text = readFileSync(join(SRC, file), 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
};

describe('docs/architecture.md maps src/', () => {
  test('every folder of src/ is on the map', () => {
    const mapped = new Set(rungItems().flatMap(foldersOf));
    assert.deepEqual(
      srcFolders().filter((folder) => !mapped.has(folder)),
      [],
    );
  });

  test('the map draws the ladder the layers test checks, rung by rung', () => {
    assert.deepEqual(rungItems().map(foldersOf), LADDER);
  });

  test('every file a rung names is in one of its folders', () => {
    const missing: string[] = [];
    for (const item of rungItems()) {
      const folders = foldersOf(item);
      for (const m of item.matchAll(/`([\w./-]+\.ts)`/g)) {
        const name = m[1] as string;
        if (name.startsWith('src/')) continue;
        const found = name.includes('/') ? existsSync(join(SRC, name)) : folders.some((folder) => existsSync(join(SRC, folder, name)));
        if (!found) missing.push(`${folders.join(', ')}: ${name}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  test('every path under src/ the page names exists', () => {
    const named = [...PAGE.matchAll(/`(src\/[^`\s]*)`/g)].map((m) => m[1] as string);
    assert.deepEqual(
      named.filter((path) => !existsSync(resolve(SRC, '..', path))),
      [],
    );
  });

  test('the files it lists as over 250 lines are those that are', () => {
    const listed = [...section('Files over 250 lines').matchAll(/`(src\/[^`]+\.ts)`/g)].map((m) => (m[1] as string).slice('src/'.length)).sort();
    const long = srcFiles()
      .filter((file) => lineCount(file) > 250)
      .sort();
    assert.deepEqual(listed, long, 'update "Files over 250 lines" in docs/architecture.md');
  });
});
