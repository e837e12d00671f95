import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { mintDevToken } from '../../src/auth/mint.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { problemsOf } from '../helpers/config.ts';
import { bearer, get, startGateway } from '../helpers/gateway.ts';
import { makeKey, signToken } from '../helpers/keys.ts';
import { startTestUpstream } from '../helpers/upstream.ts';
import { configWith } from '../../src/gateway/load-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-embedded-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `--check-config --config FILE` for `config` as a real child process: its exit code and output. */
function checkConfig(config: unknown): { status: number | null; out: string } {
  const file = join(dir, `check-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(config));
  const run = spawnSync(process.execPath, ['--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), '--check-config', '--config', file], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: run.status, out: run.stdout + run.stderr };
}

const SECRET = { secret: 's'.repeat(40), algorithms: ['HS256'] };
const MISSING_URL = /upstream\.url: not set, but resources\.customers, resources\.orders read from the default service; set it \(HYPERGATE_UPSTREAM_URL\)/;

/** A declaration of products on a service of its own, and no shipped resource on the default one. */
const CATALOGUE_ONLY = (catalogueUrl: string) => ({
  upstreams: { catalogue: { url: catalogueUrl } },
  resources: {
    customers: null,
    orders: null,
    products: { path: '/api/products/{sku}', params: { sku: 'string' }, upstream: '/products/{sku}', service: 'catalogue', fields: ['sku'] },
  },
});

describe('the embedded sample service', () => {
  test('with a key source configured, a missing upstream.url is a config error, never 100,000 fake customers behind real auth', () => {
    assert.ok(problemsOf(() => configWith({ auth: SECRET })).some((p) => MISSING_URL.test(p)));
    assert.ok(
      problemsOf(() => configWith({ auth: { jwksUrl: 'https://idp.example/jwks.json', issuer: 'https://idp.example' } })).some((p) => MISSING_URL.test(p)),
    );
  });

  test('a pass-through route on the default service needs upstream.url as a resource does', () => {
    const files = { resources: { customers: null, orders: null }, routes: { files: { path: '/api/files/{path*}', upstream: '/files/{path*}' } } };
    assert.ok(
      problemsOf(() => configWith({ ...files, auth: SECRET })).some((p) =>
        p.startsWith('upstream.url: not set, but routes.files read from the default service'),
      ),
    );
    assert.doesNotThrow(() => configWith({ ...files, auth: SECRET, upstream: { url: 'http://127.0.0.1:9' } }));
  });

  test('--check-config says so and exits 1', () => {
    const { status, out } = checkConfig({ auth: SECRET });
    assert.equal(status, 1, out);
    assert.match(out, MISSING_URL);
  });

  test('does not start when no resource reads from the default service, and upstream.url may then stay unset', async () => {
    const catalogue = await startTestUpstream();
    catalogue.on('/products/sku-1', { kind: 'json', body: { sku: 'sku-1' } });
    const key = await makeKey('ES256');
    const jwksFile = join(dir, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [key.publicJwk] }));
    for (const auth of [{ devKeyDir: join(dir, 'dev-keys') }, { jwksFile }]) {
      const check = checkConfig({ auth, ...CATALOGUE_ONLY(catalogue.url) });
      assert.equal(check.status, 0, check.out);
      const gw = await startGateway({ auth, ...CATALOGUE_ONLY(catalogue.url) });
      try {
        assert.equal(gw.gateway.embeddedUpstream, false);
        assert.equal(gw.gateway.upstreamUrl, null);
        const devKeys = gw.gateway.keySource.devKeys;
        const token =
          devKeys === undefined
            ? await signToken(key)
            : await mintDevToken(devKeys, { sub: 'dev', scope: 'customers:read', ttlSeconds: 60, issuer: null, audience: null });
        assert.equal((await get(`${gw.url}/api/products/sku-1`, bearer(token))).status, 200);
      } finally {
        await gw.close();
      }
    }
    await catalogue.close();
  });

  test('starts in dev auth mode when a resource reads from the default service and upstream.url is unset (the quick start)', async () => {
    const gw = await startGateway({ auth: { devKeyDir: join(dir, 'dev-keys') }, sampleUpstream: { customers: 10 } });
    try {
      assert.equal(gw.gateway.keySource.mode, 'dev');
      assert.equal(gw.gateway.embeddedUpstream, true);
      assert.match(String(gw.gateway.upstreamUrl), /^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await gw.close();
    }
  });
});
