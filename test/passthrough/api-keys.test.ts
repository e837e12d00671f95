import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiKeyHash, newApiKey } from '../../src/auth/api-keys/key-format.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { get } from '../helpers/gateway.ts';
import { keyFile, type KeyFile } from '../helpers/key-file.ts';
import { startStreamUpstream, type StreamUpstream } from '../helpers/stream-upstream.ts';

/** A pass-through route used with an API key: the key reaches no upstream, its claims do. */
describe('API keys on a pass-through route', () => {
  let keys: KeyFile;
  let files: StreamUpstream;
  let fx: Fixture;
  const key = newApiKey('hg_');

  before(async () => {
    keys = await keyFile({ partner: { keys: [apiKeyHash(key)], scopes: ['files:read'], claims: { tenant: 'acme' } } });
    files = await startStreamUpstream();
    fx = await startFixture({
      auth: { apiKeys: { file: keys.path, header: 'X-Api-Key' } },
      upstreams: { files: { url: files.url, forwardAuthorization: true, forwardClaims: { 'X-Tenant': 'tenant' } } },
      routes: { private: { path: '/api/private/{name}', methods: ['GET'], service: 'files', upstream: '/headers', scope: 'files:read' } },
      log: { access: false },
    });
  });
  after(async () => {
    await fx.close();
    await files.close();
    await keys.remove();
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
