import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readDefaults } from '../../src/config/load.ts';
import { readmeConfigRows } from '../helpers/readme.ts';

/** Rows of the README "Configuration" table: key → default cell, parsed as JSON. */
function readmeRows(): Map<string, unknown> {
  return new Map([...readmeConfigRows()].map(([key, row]) => [key, row.defaultValue]));
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
