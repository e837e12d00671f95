import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { ROOT } from '../helpers/process.ts';

/**
 * Issue 13, item 2: undici (~8 MB) and ioredis (~18 MB of resident memory at import) load when the
 * gateway first needs them, not at start: a gateway that has served nothing, without redis.url,
 * holds neither in its module cache. OpenTelemetry's SDK, propagators and exporter load only when
 * tracing.enabled is true; @opentelemetry/api alone is loaded by prom-client (its CPU metric reads
 * the API's trace context for exemplars), so the check leaves it out.
 */
const OTEL_SDK = /\/node_modules\/@opentelemetry\/(?!api\/)/;
describe('modules loaded at start', () => {
  test('a started gateway without redis.url or tracing has loaded neither ioredis, undici nor OpenTelemetry', async () => {
    const script = `
      import { createRequire } from 'node:module';
      import { createGateway } from './src/gateway/create-gateway.ts';
      import { configWith } from './src/gateway/load-config.ts';
      const gw = await createGateway(configWith({ server: { port: 0 } }));
      const cache = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({ ioredis: cache.some((k) => k.includes('/node_modules/ioredis/')), undici: cache.some((k) => k.includes('/node_modules/undici/')), opentelemetry: cache.some((k) => OTEL_SDK.test(k)) }));
      await gw.close();
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script.replace('OTEL_SDK', String(OTEL_SDK))],
      { cwd: ROOT, timeout: 60_000 },
    );
    assert.deepEqual(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}'), { ioredis: false, undici: false, opentelemetry: false });
  });

  test('a gateway with tracing.enabled loads OpenTelemetry (the check above would see it)', async () => {
    const script = `
      import { createRequire } from 'node:module';
      import { createGateway } from './src/gateway/create-gateway.ts';
      import { configWith } from './src/gateway/load-config.ts';
      const gw = await createGateway(configWith({ server: { port: 0 }, tracing: { enabled: true, exporter: { url: 'http://127.0.0.1:9/v1/traces' } } }));
      const cache = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({ opentelemetry: cache.some((k) => OTEL_SDK.test(k)) }));
      await gw.close();
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script.replace('OTEL_SDK', String(OTEL_SDK))],
      { cwd: ROOT, timeout: 60_000 },
    );
    assert.deepEqual(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}'), { opentelemetry: true });
  });
});
