import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, it } from 'node:test';
import { defaultsText, tableRegion, tableText } from '../../scripts/config-reference.ts';
import { DEFAULTS_FILE, PROJECT_ROOT, readDefaults } from '../../src/config/load.ts';
import { CONFIG_SCHEMA, type Rule } from '../../src/config/schema.ts';
import { documentedConfigRows, type DefaultCell } from '../helpers/config-table.ts';

/** Rows of the configuration table in docs/configuration.md: key → default cell. */
function documentedRows(): Map<string, DefaultCell> {
  return new Map([...documentedConfigRows()].map(([key, row]) => [key, row.default]));
}

/** Leaf values of the defaults by dotted path; an empty object is a leaf (`upstreams`, `upstream.headers`). */
function leaves(tree: Record<string, unknown>, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(tree)) {
    const path = prefix === '' ? k : `${prefix}.${k}`;
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0)
      for (const [p, x] of leaves(v as Record<string, unknown>, path)) out.set(p, x);
    else out.set(path, v);
  }
  return out;
}

/** Every key a declaration may have (resources.<name>.*), with its default when it may be left out. */
function declarationKeys(
  rule: Rule,
  prefix: string,
  out = new Map<string, { optional: boolean; value?: unknown }>(),
): Map<string, { optional: boolean; value?: unknown }> {
  if (rule.kind !== 'section') return out;
  for (const [key, child] of Object.entries(rule.keys)) {
    const path = `${prefix}.${key}`;
    out.set(path, child.default === undefined ? { optional: false } : { optional: true, value: child.default });
    if (child.kind === 'section') declarationKeys(child, path, out);
    // A map of declarations (query parameters) is documented by key, `<name>` for each entry's name.
    if (child.kind === 'map' && child.values.kind === 'section') declarationKeys(child.values, `${path}.<name>`, out);
    // The object form of a string-or-object key (collection.total's {"header": ...}).
    if (child.kind === 'stringOr') declarationKeys(child.section, path, out);
    // The object form of an entry of a string-or-object list (a field renamed from a pointer).
    if (child.kind === 'strings' && child.entries !== undefined) declarationKeys(child.entries, `${path}[]`, out);
    // An array of objects (a plan's quotas, a service's targets): each entry's keys under `<key>[]`.
    if (child.kind === 'list' && child.items.kind === 'section') declarationKeys(child.items, `${path}[]`, out);
  }
  return out;
}

const resourcesRule = CONFIG_SCHEMA.kind === 'section' ? CONFIG_SCHEMA.keys['resources'] : undefined;
const declarationRule = resourcesRule?.kind === 'map' ? resourcesRule.values : undefined;
const routesRule = CONFIG_SCHEMA.kind === 'section' ? CONFIG_SCHEMA.keys['routes'] : undefined;
const routeRule = routesRule?.kind === 'map' ? routesRule.values : undefined;
const plansRule = CONFIG_SCHEMA.kind === 'section' ? CONFIG_SCHEMA.keys['plans'] : undefined;
const planRule = plansRule?.kind === 'map' ? plansRule.values : undefined;

describe('config/default.json and the configuration table', () => {
  it('config/default.json is what the schema writes (npm run config:docs)', () => {
    assert.equal(readFileSync(DEFAULTS_FILE, 'utf8'), defaultsText(), 'config/default.json differs from src/config/schema.ts: run npm run config:docs');
  });

  it('the table between its markers is what the schema writes (npm run config:docs)', () => {
    const { file, text, start, end } = tableRegion();
    assert.equal(
      text.slice(start, end),
      `${tableText()}\n`,
      `the table in ${relative(PROJECT_ROOT, file)} differs from src/config/schema.ts: run npm run config:docs`,
    );
  });
});

describe('the configuration table of docs/configuration.md', () => {
  const rows = documentedRows();
  // Declared resources are documented by key (resources.<name>.path), not by each shipped value.
  const defaults = new Map([...leaves(readDefaults())].filter(([key]) => !key.startsWith('resources.')));
  const declaration =
    declarationRule === undefined ? new Map<string, { optional: boolean; value?: unknown }>() : declarationKeys(declarationRule, 'resources.<name>');
  const route = routeRule === undefined ? new Map<string, { optional: boolean; value?: unknown }>() : declarationKeys(routeRule, 'routes.<name>');
  const plan = planRule === undefined ? new Map<string, { optional: boolean; value?: unknown }>() : declarationKeys(planRule, 'plans.<name>');

  it('lists every key of config/default.json with the same default', () => {
    for (const [key, value] of defaults) {
      const row = rows.get(key);
      assert.ok(row !== undefined, `the configuration table has no row for ${key}`);
      // Paths in the defaults are resolved at load time; the file's own text is what the table shows.
      assert.ok('json' in row, `the documented default of ${key} is one backticked JSON value`);
      assert.deepEqual(row.json, value, `the documented default of ${key}`);
    }
  });

  it('lists every key a resource declaration may have, with the default of each that may be left out', () => {
    assert.ok(declaration.size > 10, 'the schema declares resources');
    for (const [key, rule] of declaration) {
      const row = rows.get(key);
      assert.ok(row !== undefined, `the configuration table has no row for ${key}`);
      if (rule.optional) assert.deepEqual('json' in row ? row.json : row.text, rule.value, `the documented default of ${key}`);
      else assert.ok('text' in row && row.text === 'required', `${key} is required: its default cell says so`);
    }
    for (const name of Object.keys(readDefaults()['resources'] as object)) {
      for (const key of Object.keys((readDefaults()['resources'] as Record<string, object>)[name] as object)) {
        assert.ok(declaration.has(`resources.<name>.${key}`), `the shipped resources.${name}.${key} is a documented key`);
      }
    }
  });

  it('lists every key a pass-through route may have, with the default of each that may be left out', () => {
    assert.ok(route.size > 5, 'the schema declares routes');
    for (const [key, rule] of route) {
      const row = rows.get(key);
      assert.ok(row !== undefined, `the configuration table has no row for ${key}`);
      if (rule.optional) assert.deepEqual('json' in row ? row.json : row.text, rule.value, `the documented default of ${key}`);
      else assert.ok('text' in row && row.text === 'required', `${key} is required: its default cell says so`);
    }
  });

  it('lists every key a plan may have, with the default of each that may be left out', () => {
    assert.ok(plan.size >= 5, 'the schema declares plans');
    for (const [key, rule] of plan) {
      const row = rows.get(key);
      assert.ok(row !== undefined, `the configuration table has no row for ${key}`);
      if (rule.optional) assert.deepEqual('json' in row ? row.json : row.text, rule.value, `the documented default of ${key}`);
      else assert.ok('text' in row && row.text === 'required', `${key} is required: its default cell says so`);
    }
  });

  it('lists no key that config/default.json or a declaration does not have', () => {
    for (const key of rows.keys()) {
      assert.ok(
        // A key of a list's entries (redis.sentinels[].host) belongs to the list's own key.
        defaults.has(key) ||
          defaults.has(key.split('[]')[0] as string) ||
          declaration.has(key) ||
          route.has(key) ||
          plan.has(key) ||
          key === 'upstreams.<name>',
        `docs/configuration.md documents ${key}, which config/default.json does not have`,
      );
    }
  });
});
