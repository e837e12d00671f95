import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { ROOT } from '../helpers/process.ts';

/**
 * Issue 13, item 2: undici (~8 MB) and ioredis (~18 MB of resident memory at import) load when the
 * gateway first needs them, not at start: a gateway that has served nothing, without redis.url,
 * holds neither in its module cache.
 */
describe('modules loaded at start', () => {
  test('a started gateway without redis.url has loaded neither ioredis nor undici', async () => {
    const script = `
      import { createRequire } from 'node:module';
      import { createGateway } from './src/gateway/create-gateway.ts';
      import { configWith } from './src/gateway/load-config.ts';
      const gw = await createGateway(configWith({ server: { port: 0 } }));
      const cache = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({ ioredis: cache.some((k) => k.includes('/node_modules/ioredis/')), undici: cache.some((k) => k.includes('/node_modules/undici/')) }));
      await gw.close();
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, timeout: 60_000 });
    assert.deepEqual(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}'), { ioredis: false, undici: false });
  });
});
