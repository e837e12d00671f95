import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { apiKeyHash, newApiKey } from '../../src/auth/api-keys/key-format.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { get } from '../helpers/gateway.ts';
import { startStreamUpstream, type StreamUpstream } from '../helpers/stream-upstream.ts';

/** A pass-through route used with an API key: the key reaches no upstream, its claims do. */
describe('API keys on a pass-through route', () => {
  let dir: string;
  let files: StreamUpstream;
  let fx: Fixture;
  const key = newApiKey('hg_');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hg-api-keys-'));
    const file = join(dir, 'api-keys.json');
    await writeFile(file, JSON.stringify({ consumers: { partner: { keys: [apiKeyHash(key)], scopes: ['files:read'], claims: { tenant: 'acme' } } } }));
    files = await startStreamUpstream();
    fx = await startFixture({
      auth: { apiKeys: { file, header: 'X-Api-Key' } },
      upstreams: { files: { url: files.url, forwardAuthorization: true, forwardClaims: { 'X-Tenant': 'tenant' } } },
      routes: { private: { path: '/api/private/{name}', methods: ['GET'], service: 'files', upstream: '/headers', scope: 'files:read' } },
      log: { access: false },
    });
  });
  after(async () => {
    await fx.close();
    await files.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the key header is not passed on; the consumer claims are', async () => {
    const res = await get(`${fx.gw.url}/api/private/a`, { 'x-api-key': key });
    assert.equal(res.status, 200, res.text);
    const seen = (files.seen.at(-1)?.headers ?? {}) as Record<string, string | undefined>;
    assert.equal(seen['x-tenant'], 'acme');
    assert.equal(seen['x-api-key'], undefined);
    assert.equal(seen['authorization'], undefined);
    assert.ok(!JSON.stringify(files.seen).includes(key), 'the key reached no upstream');
  });
});
