import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ERROR_CODES, ERRORS, HgError } from '../src/lib/errors.ts';
import { problemBody } from '../src/protocol/problem.ts';
import { ROOT } from './helpers/process.ts';

describe('error registry', () => {
  test('every code has a 4xx or 5xx status, a unique problem type and a title', () => {
    const slugs = new Set<string>();
    for (const code of ERROR_CODES) {
      const def = ERRORS[code];
      assert.ok(def.status >= 400 && def.status < 600, code);
      assert.ok(!slugs.has(def.slug), `duplicate slug ${def.slug}`);
      slugs.add(def.slug);
      assert.ok(def.title.length > 0 && def.detail.length > 0, code);
    }
  });

  test('every code is documented in the error registry of docs/errors.md with its status and type', () => {
    const registry = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
    for (const code of ERROR_CODES) {
      const def = ERRORS[code];
      const row = registry.split('\n').find((line) => line.includes(`\`${code}\``));
      assert.ok(row, `${code} is missing from docs/errors.md`);
      assert.ok(row.includes(`| ${def.status} |`), `${code}: docs/errors.md row lacks status ${def.status}`);
      assert.ok(row.includes(`urn:hypergate:problem:${def.slug}`), `${code}: docs/errors.md row lacks its type`);
    }
  });

  test('a problem body carries type, title, status, detail and code', () => {
    assert.deepEqual(problemBody(new HgError('HG_ERR_NOT_ACCEPTABLE', { detail: 'x' })), {
      type: 'urn:hypergate:problem:not-acceptable',
      title: 'Not Acceptable',
      status: 406,
      detail: 'x',
      code: 'HG_ERR_NOT_ACCEPTABLE',
    });
  });
});
