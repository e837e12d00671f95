import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { PROJECT_ROOT, readDefaults } from '../../src/config/load.ts';

/** Rows of the README "Configuration" table: key → default cell, parsed as JSON. */
function readmeRows(): Map<string, unknown> {
  const text = readFileSync(resolve(PROJECT_ROOT, 'README.md'), 'utf8');
  const start = text.indexOf('\n## Configuration');
  assert.notEqual(start, -1, 'README has a "## Configuration" section');
  const end = text.indexOf('\n## ', start + 1);
  const rows = new Map<string, unknown>();
  for (const line of text.slice(start, end === -1 ? undefined : end).split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const key = /^`([A-Za-z0-9.]+)`$/.exec(cells[1] ?? '')?.[1];
    const value = /^`(.*)`$/.exec(cells[3] ?? '')?.[1];
    if (key === undefined || value === undefined) continue;
    rows.set(key, JSON.parse(value));
  }
  return rows;
}

function leaves(tree: Record<string, unknown>, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(tree)) {
    const path = prefix === '' ? k : `${prefix}.${k}`;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) for (const [p, x] of leaves(v as Record<string, unknown>, path)) out.set(p, x);
    else out.set(path, v);
  }
  return out;
}

describe('the README configuration table', () => {
  const rows = readmeRows();
  const defaults = leaves(readDefaults());

  it('lists every key of config/default.json with the same default', () => {
    for (const [key, value] of defaults) {
      assert.ok(rows.has(key), `README table has no row for ${key}`);
      // Paths in the defaults are resolved at load time; the file's own text is what the table shows.
      assert.deepEqual(rows.get(key), value, `README default of ${key}`);
    }
  });

  it('lists no key that config/default.json does not have', () => {
    for (const key of rows.keys()) assert.ok(defaults.has(key), `README documents ${key}, which config/default.json does not have`);
  });
});
