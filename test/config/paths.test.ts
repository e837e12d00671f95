/**
 * Path-valued keys: the schema marks them, and every marked key set relative in a config file
 * resolves against that file's folder (the defaults' against the package), whatever the cwd.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { CONFIG_SCHEMA, type Rule } from '../../src/config/schema.ts';
import { SOME_UPSTREAM } from '../helpers/config.ts';
import { documentedConfigRows } from '../helpers/config-table.ts';
import { loadConfig } from '../../src/gateway/load-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-paths-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every leaf key of the schema as `section.key`, with its rule. */
function leaves(rule: Rule, prefix = ''): Map<string, Rule> {
  const out = new Map<string, Rule>();
  if (rule.kind !== 'section') return out.set(prefix, rule);
  for (const [key, child] of Object.entries(rule.keys)) for (const [p, r] of leaves(child, prefix === '' ? key : `${prefix}.${key}`)) out.set(p, r);
  return out;
}

const marked = [...leaves(CONFIG_SCHEMA)].filter(([, rule]) => rule.kind === 'string' && rule.path === true).map(([key]) => key);

/** `{ a: { b: value } }` for `a.b`. */
function nested(key: string, value: unknown): unknown {
  return key.split('.').reduceRight<unknown>((inner, part) => ({ [part]: inner }), value);
}

function valueAt(tree: unknown, key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], tree);
}

describe('path keys', () => {
  test('every key named as a file or folder, or typed as a path in the configuration table of docs/configuration.md, is marked as a path in the schema, and no other', () => {
    const documented = documentedConfigRows();
    const expected = [...leaves(CONFIG_SCHEMA).keys()]
      .filter((key) => /(File|Dir|Path|Folder)$/.test(key) || /^path\b/.test(documented.get(key)?.type ?? ''))
      .sort();
    assert.ok(expected.includes('auth.publicKeyFile') && expected.includes('auth.devKeyDir'), expected.join(', '));
    assert.deepEqual([...marked].sort(), expected);
  });

  test("every path key set relative in a config file resolves against that file's folder, not the cwd", () => {
    mkdirSync(join(dir, 'etc'), { recursive: true });
    assert.ok(marked.length > 0);
    for (const key of marked) {
      const file = join(dir, 'etc', `${key}.json`);
      writeFileSync(file, JSON.stringify({ upstream: SOME_UPSTREAM, ...(nested(key, 'keys/here') as object) }));
      assert.equal(valueAt(loadConfig({ file }), key), join(dir, 'etc', 'keys/here'), key);
    }
  });

  test('a relative path in config/default.json resolves against the package root', () => {
    assert.equal(loadConfig().auth.devKeyDir, join(PROJECT_ROOT, '.hypergate/dev-keys'));
  });
});
