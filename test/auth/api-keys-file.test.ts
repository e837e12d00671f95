import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { apiKeyHash, isWellFormedApiKey, newApiKey } from '../../src/auth/api-keys/key-format.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { keyFile, type KeyFile } from '../helpers/key-file.ts';
import { captureLog } from '../helpers/log.ts';
import { sample } from '../helpers/metrics.ts';

const apiKey = (key: string): Record<string, string> => ({ authorization: `ApiKey ${key}` });

describe('API keys from a file (auth.apiKeys.file)', () => {
  let keys: KeyFile;
  let fx: Fixture;
  const log = captureLog();
  const partnerKey = newApiKey('hg_');
  const customerKey = newApiKey('hg_');
  const otherKey = newApiKey('hg_');

  before(async () => {
    keys = await keyFile({
      partner: { keys: [apiKeyHash(partnerKey)], scopes: ['customers:read', 'customers:read:any'], claims: { name: 'Partner.Ltd' }, plan: 'gold' },
      'customer-7': { keys: [apiKeyHash(customerKey)], scopes: ['customers:read'], claims: { customer_id: 7 } },
    });
    fx = await startFixture(
      {
        auth: { ownerClaim: 'customer_id', apiKeys: { file: keys.path } },
        upstream: { forwardClaims: { 'X-Name': 'name', 'X-Customer': 'customer_id' }, forwardAuthorization: true },
      },
      { logger: log.logger },
    );
  });
  after(async () => {
    await fx.close();
    await keys.remove();
  });
  const url = (path: string): string => `${fx.gw.url}${path}`;

  test('a key made here is well formed; a changed character or a cut one is not', () => {
    assert.match(partnerKey, /^hg_[0-9A-Za-z]{38}$/);
    assert.ok(isWellFormedApiKey(partnerKey, 'hg_'));
    const last = partnerKey.at(-1) === 'a' ? 'b' : 'a';
    assert.equal(isWellFormedApiKey(`${partnerKey.slice(0, -1)}${last}`, 'hg_'), false);
    assert.equal(isWellFormedApiKey(partnerKey.slice(0, -1), 'hg_'), false);
    assert.equal(isWellFormedApiKey(partnerKey, 'xx_'), false);
  });

  test('a key reads what its scopes allow, and its claims are forwarded as a token claim is', async () => {
    const res = await get(url('/api/customers/11'), apiKey(partnerKey));
    assert.equal(res.status, 200, res.text);
    const at = fx.upstream.paths.indexOf('/customers/11');
    assert.equal(fx.upstream.headersSeen[at]?.['x-name'], 'Partner.Ltd');
    assert.equal(fx.upstream.headersSeen[at]?.['authorization'], undefined, 'the key never goes upstream');
  });

  test("ownership reads a key's claims: its own customer, and no other", async () => {
    assert.equal((await get(url('/api/customers/7'), apiKey(customerKey))).status, 200);
    const other = await get(url('/api/customers/8'), apiKey(customerKey));
    assertProblem(other, { status: 403, code: 'HG_ERR_NOT_OWNER' });
    // The ApiKey scheme is case-insensitive.
    assert.equal((await get(url('/api/customers/7'), { authorization: `apikey  ${customerKey}` })).status, 200);
  });

  test('a mistyped key is refused before any lookup, an unknown one after it; both name both schemes', async () => {
    const typo = `${partnerKey.slice(0, 10)}${partnerKey[10] === 'Z' ? 'Y' : 'Z'}${partnerKey.slice(11)}`;
    const before = sample(await fx.gw.gateway.metrics.text(), 'hypergate_authentications_total', { scheme: 'api-key', result: 'malformed' }) ?? 0;
    const mistyped = await get(url('/api/customers/1'), apiKey(typo));
    assertProblem(mistyped, { status: 401, code: 'HG_ERR_AUTH_INVALID_TOKEN' });
    assert.match(
      String(mistyped.headers['www-authenticate']),
      /^ApiKey realm="hypergate", error="invalid_token", error_description="the key is malformed", Bearer realm="hypergate"$/,
    );
    const after = sample(await fx.gw.gateway.metrics.text(), 'hypergate_authentications_total', { scheme: 'api-key', result: 'malformed' }) ?? 0;
    assert.equal(after - before, 1);
    const unknown = await get(url('/api/customers/1'), apiKey(otherKey));
    assertProblem(unknown, { status: 401, code: 'HG_ERR_AUTH_INVALID_TOKEN' });
    assert.match(unknown.text, /unknown, revoked or expired/);
    assert.equal(fx.upstream.hits('/customers/1'), 0);
  });

  test('without credentials, or with a bad bearer token, the challenge names Bearer and ApiKey', async () => {
    const none = await get(url('/api/customers/1'));
    assertProblem(none, { status: 401, code: 'HG_ERR_AUTH_MISSING', headers: { 'www-authenticate': 'Bearer realm="hypergate", ApiKey realm="hypergate"' } });
    const bad = await get(url('/api/customers/1'), bearer('not.a.token'));
    assert.equal(bad.status, 401);
    assert.match(String(bad.headers['www-authenticate']), /^Bearer realm="hypergate", error="invalid_token".*, ApiKey realm="hypergate"$/);
  });

  test('the access log names the scheme and the consumer in `sub`, never the key', async () => {
    assert.equal((await get(url('/api/customers/13'), apiKey(partnerKey))).status, 200);
    log.logger.accessLog?.flush();
    const line = log.records().find((r) => r['msg'] === 'request' && r['path'] === '/api/customers/13');
    assert.equal(line?.['sub'], 'api-key:partner');
    assert.ok(!log.lines.some((l) => l.includes(partnerKey)), 'no line carries a key');
  });

  test('tokens work as before beside keys', async () => {
    const token = await fx.token({ claims: { sub: 'u1', scope: 'customers:read customers:read:any', name: 'Ann' } });
    assert.equal((await get(url('/api/customers/12'), bearer(token))).status, 200);
    const ok = sample(await fx.gw.gateway.metrics.text(), 'hypergate_authentications_total', { scheme: 'jwt', result: 'ok' }) ?? 0;
    assert.ok(ok >= 1);
  });

  test('a reload reads the file again: a hash taken out revokes its key', async () => {
    assert.equal((await get(url('/api/customers/7'), apiKey(customerKey))).status, 200);
    await keys.write({ partner: { keys: [apiKeyHash(partnerKey)], scopes: ['customers:read', 'customers:read:any'] } });
    await fx.gw.gateway.reload(fx.gw.gateway.config);
    assertProblem(await get(url('/api/customers/7'), apiKey(customerKey)), { status: 401, code: 'HG_ERR_AUTH_INVALID_TOKEN' });
    assert.equal((await get(url('/api/customers/7'), apiKey(partnerKey))).status, 200);
  });
});

describe('API keys in a header the operator names (auth.apiKeys.header)', () => {
  let keys: KeyFile;
  let fx: Fixture;
  const key = newApiKey('acme_');

  before(async () => {
    keys = await keyFile({ mobile: { keys: [apiKeyHash(key)], scopes: ['customers:read'] } });
    fx = await startFixture({ auth: { apiKeys: { file: keys.path, header: 'X-Api-Key', prefix: 'acme_' } }, log: { access: false } });
  });
  after(async () => {
    await fx.close();
    await keys.remove();
  });

  test('the OpenAPI document offers the key as an alternative to the token on every authorized operation', async () => {
    const res = await get(`${fx.gw.url}/api/openapi.json`, { 'x-api-key': key, accept: 'application/json' });
    assert.equal(res.status, 200, res.text);
    const doc = res.json() as { components: { securitySchemes: Record<string, unknown> }; paths: Record<string, Record<string, { security?: unknown }>> };
    assert.deepEqual(doc.components.securitySchemes['apiKeyAuth'], {
      type: 'apiKey',
      in: 'header',
      name: 'X-Api-Key',
      description: "An API key, in place of a token: its consumer's scopes and claims are read as a token's. Never in a query parameter.",
    });
    assert.deepEqual(doc.paths['/api/customers/{id}']?.['get']?.security, [{ bearerAuth: ['customers:read'] }, { apiKeyAuth: ['customers:read'] }]);
    const result = await new Validator().validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors));
  });

  test('the key is read from that header; a query parameter is never read', async () => {
    assert.equal((await get(`${fx.gw.url}/api/customers/3`, { 'x-api-key': key })).status, 200);
    const query = await get(`${fx.gw.url}/api/customers/3?api_key=${key}`);
    assert.ok(query.status === 400 || query.status === 401, `got ${query.status}`);
    const none = await get(`${fx.gw.url}/api/customers/3`);
    assertProblem(none, {
      status: 401,
      code: 'HG_ERR_AUTH_MISSING',
      headers: { 'www-authenticate': 'Bearer realm="hypergate", ApiKey realm="hypergate", header="X-Api-Key"' },
    });
  });
});

describe('a key file that is not right stops the start, naming the file and the consumer', () => {
  test('a hash that is not 64 hex digits, and a file that is not there', async () => {
    const keys = await keyFile({ 'partner-x': { keys: ['not-a-hash'] } });
    try {
      await assert.rejects(startFixture({ auth: { apiKeys: { file: keys.path } } }), (err: Error) => {
        assert.match(err.message, /auth\.apiKeys\.file: .*api-keys\.json: consumer "partner-x": "keys" must list the SHA-256/);
        return true;
      });
      await assert.rejects(startFixture({ auth: { apiKeys: { file: `${keys.path}.missing` } } }), /\.missing: could not be read \(ENOENT\)/);
    } finally {
      await keys.remove();
    }
  });
});

describe('API keys under the rate limit', () => {
  let keys: KeyFile;
  let fx: Fixture;
  const key = newApiKey('hg_');

  before(async () => {
    keys = await keyFile({ partner: { keys: [apiKeyHash(key)], scopes: ['customers:read'] } });
    fx = await startFixture({ auth: { apiKeys: { file: keys.path } }, rateLimit: { requestsPerSecond: 1, burst: 2 }, log: { access: false } });
  });
  after(async () => {
    await fx.close();
    await keys.remove();
  });

  test("a mistyped key costs its address's budget as a bad token does; a valid key is charged to its consumer", async () => {
    const typo = `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`;
    for (let i = 0; i < 2; i++) assert.equal((await get(`${fx.gw.url}/api/customers/1`, apiKey(typo))).status, 401);
    assertProblem(await get(`${fx.gw.url}/api/customers/1`, apiKey(typo)), { status: 429, code: 'HG_ERR_RATE_LIMITED' });
    // The address is spent, but a valid key pays from its own bucket.
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, apiKey(key))).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, apiKey(key))).status, 200);
    assertProblem(await get(`${fx.gw.url}/api/customers/1`, apiKey(key)), { status: 429, code: 'HG_ERR_RATE_LIMITED' });
  });
});
