import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { ROOT } from '../helpers/process.ts';

/** Module hooks that print the URL of every module this process loads to stderr (the hooks run on their own thread). */
const HOOKS = `
import { writeSync } from 'node:fs';
export async function load(url, context, nextLoad) {
  writeSync(2, 'loaded ' + url + '\\n');
  return nextLoad(url, context);
}
`;

/**
 * The checks of resource and pass-through route declarations the config loader is given
 * (gateway/load-config.ts), and the parsers they use (path and link templates, field entries,
 * parameter types, JSON pointers and schemas, where templates overlap, the gateway's own paths, declared query parameters
 * and paging): a primary validates the config it reloads, so it loads them.
 */
const DECLARATION_CHECKS = [
  'resources/config-checks.ts',
  'resources/template.ts',
  'resources/link-template.ts',
  'resources/fields.ts',
  'resources/params.ts',
  'resources/json-pointer.ts',
  'resources/json-schema.ts',
  'resources/overlap.ts',
  'resources/own-paths.ts',
  'resources/query-checks.ts',
  'resources/query-model.ts',
  'resources/query-text.ts',
  'passthrough/config-checks.ts',
  'passthrough/route-template.ts',
];

/**
 * A cluster's primary (server.workers > 1) forks, watches and reloads its workers and owns the
 * admin listener: it verifies admin tokens, but never answers a public request. What main.ts
 * loads before it picks its role is all a primary ever loads, so `--help` (which returns right
 * after) shows it. The request engine loads in the workers only.
 */
describe('modules a cluster primary loads', () => {
  test('main.ts loads the primary and the admin listener, and none of the request engine', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'hypergate-modules-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'hooks.mjs'), HOOKS);
    await writeFile(
      join(dir, 'register.mjs'),
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`,
    );
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', join(dir, 'register.mjs'), 'src/main.ts', '--help'], {
      cwd: ROOT,
      timeout: 60_000,
    });
    const src = `${pathToFileURL(join(ROOT, 'src')).href}/`;
    const loaded = stderr
      .split('\n')
      .filter((line) => line.startsWith(`loaded ${src}`))
      .map((line) => line.slice(`loaded ${src}`.length));
    // The hooks saw the primary's own modules, so what is absent below is absent indeed.
    for (const file of ['main.ts', 'run/primary.ts', 'admin/server.ts', 'gateway/reload.ts', 'auth/authenticate.ts']) assert.ok(loaded.includes(file), file);
    const engine = loaded.filter(
      (file) =>
        (/^(resources|passthrough|cache|cluster|upstream|hypermedia|openapi|sample-upstream)\//.test(file) && !DECLARATION_CHECKS.includes(file)) ||
        ['run/serve.ts', 'gateway/create-gateway.ts', 'gateway/pipeline.ts', 'http/dispatch.ts', 'http/router.ts'].includes(file),
    );
    assert.deepEqual(engine, []);
  });
});
