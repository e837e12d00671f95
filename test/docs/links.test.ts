import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/load.ts';

/** The documents a reader of the repository starts from: the README, everything in docs/, and bench/README.md. */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(resolve(PROJECT_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'bench/README.md',
];

const read = (file: string): string => readFileSync(resolve(PROJECT_ROOT, file), 'utf8');

/** The text outside fenced code blocks, line by line (a `# comment` in a shell block is no heading). */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push(line);
  }
  return lines;
}

/** Link targets: inline links and images `[text](target)` and reference definitions `[name]: target`, outside code. */
function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1] as string);
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/.exec(prose);
    if (definition !== null) targets.push(definition[1] as string);
  }
  return targets;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** GitHub's anchors for a document's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const slug = (heading[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Folders .gitignore keeps out of the repository (node_modules/, dist/, ...): a file there is not in a clone. */
const IGNORED_FOLDERS = read('.gitignore')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l.endsWith('/') && !l.startsWith('#'))
  .map((l) => l.replace(/^\//, ''));

/** The repository-relative path a link in `document` points at, or null when it leaves the repository. */
function inRepository(document: string, path: string): string | null {
  const absolute = path.startsWith('/') ? join(PROJECT_ROOT, path) : resolve(PROJECT_ROOT, dirname(document), path);
  const rel = relative(PROJECT_ROOT, absolute);
  return rel.startsWith('..') || rel.startsWith(sep) ? null : rel.split(sep).join('/');
}

/**
 * Does this link lead out of a clone of the repository: a file: URL, or a path above its root?
 * (A path that starts with / is the repository's root, as GitHub reads it.) Web links are fine.
 */
function leavesRepository(document: string, target: string): boolean {
  if (/^file:/i.test(target)) return true;
  if (isExternal(target) || target.startsWith('#')) return false;
  return inRepository(document, decodeURIComponent(target.split('#')[0]?.split('?')[0] ?? '')) === null;
}

describe('the README, docs/ and bench/README.md stand alone', () => {
  for (const document of DOCUMENTS) {
    test(`every relative link in ${document} names a file in the repository`, () => {
      const missing: string[] = [];
      for (const target of linkTargets(read(document))) {
        if (isExternal(target) || target.startsWith('#')) continue;
        const path = decodeURIComponent(target.split('#')[0]?.split('?')[0] ?? '');
        const rel = inRepository(document, path);
        if (rel === null || !existsSync(resolve(PROJECT_ROOT, rel)) || IGNORED_FOLDERS.some((f) => `${rel}/`.startsWith(f))) missing.push(target);
      }
      assert.deepEqual(missing, []);
    });

    test(`every link from ${document} to a section of a markdown file names one of its headings`, () => {
      const broken: string[] = [];
      for (const target of linkTargets(read(document))) {
        const hash = target.indexOf('#');
        if (isExternal(target) || hash === -1) continue;
        const file = hash === 0 ? document : inRepository(document, decodeURIComponent(target.slice(0, hash)));
        if (file === null || !file.endsWith('.md') || !existsSync(resolve(PROJECT_ROOT, file))) continue;
        if (!anchorsOf(read(file)).has(decodeURIComponent(target.slice(hash + 1)))) broken.push(target);
      }
      assert.deepEqual(broken, []);
    });

    test(`no link in ${document} leads outside the repository`, () => {
      assert.deepEqual(
        linkTargets(read(document)).filter((target) => leavesRepository(document, target)),
        [],
      );
    });
  }

  test('the README links every document in docs/ and bench/README.md', () => {
    const targets = linkTargets(read('README.md'));
    for (const document of DOCUMENTS.filter((d) => d !== 'README.md')) assert.ok(targets.includes(document), document);
  });

  test('a link to a missing file or heading, and a link out of the repository, are caught', () => {
    // The checks above are only as good as their parsing: they must see these.
    const sample =
      'See [the contract](../../outside/x.md), ![chart](bench/nope.svg), [ok](docs/caching.md#invalidation) and [bad](docs/caching.md#no-such-section).\n\n```sh\n# not a heading\n```\n';
    assert.deepEqual(linkTargets(sample), ['../../outside/x.md', 'bench/nope.svg', 'docs/caching.md#invalidation', 'docs/caching.md#no-such-section']);
    assert.equal(existsSync(resolve(PROJECT_ROOT, 'bench/nope.svg')), false);
    const cachingAnchors = anchorsOf(read('docs/caching.md'));
    assert.ok(cachingAnchors.has('invalidation'));
    assert.ok(!cachingAnchors.has('no-such-section'));
    assert.ok(!anchorsOf(sample).has('not-a-heading'));
    assert.equal(inRepository('docs/contract.md', '../../outside.md'), null);
    assert.equal(leavesRepository('docs/contract.md', '../../outside/x.md'), true);
    assert.equal(leavesRepository('README.md', 'file:///etc/hosts'), true);
    assert.equal(leavesRepository('docs/architecture.md', '../src/cluster/'), false);
    assert.equal(leavesRepository('README.md', 'https://www.rfc-editor.org/rfc/rfc9111.html'), false);
  });

  test('a line that names a folder called shared/ without linking to it is fine', () => {
    assert.deepEqual(
      linkTargets('Redis code lived in `src/shared/`; shared/ is a word here.').filter((t) => leavesRepository('README.md', t)),
      [],
    );
  });
});
