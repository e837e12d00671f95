import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { CONFIG_SCHEMA, type Rule } from '../../src/config/schema.ts';

/** Every key the schema marks as a path (resolved against the config file's folder), `<name>` for named entries. */
function pathKeys(rule: Rule, at: string): string[] {
  if (rule.kind === 'section') return Object.entries(rule.keys).flatMap(([key, child]) => pathKeys(child, at === '' ? key : `${at}.${key}`));
  if (rule.kind === 'map') return pathKeys(rule.values, `${at}.<name>`);
  return rule.kind === 'string' && rule.path === true ? [at] : [];
}

test('docs/configuration.md "Where paths point" lists every key whose relative path resolves against the config file', () => {
  const text = readFileSync(resolve(PROJECT_ROOT, 'docs/configuration.md'), 'utf8');
  const start = text.indexOf('\n## Where paths point');
  assert.notEqual(start, -1, 'docs/configuration.md lost its section on where paths point');
  const list = /\(the keys of type `path` in the table below:([^)]*)\)/.exec(text.slice(start))?.[1] ?? '';
  const listed = [...list.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
  assert.deepEqual(listed.toSorted(), pathKeys(CONFIG_SCHEMA, '').toSorted());
});
