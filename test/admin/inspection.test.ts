import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { createGateway, type Gateway } from '../../src/gateway/create-gateway.ts';
import { loadConfig } from '../../src/gateway/load-config.ts';
import { bearer, get, problemOf, type HttpAnswer } from '../helpers/gateway.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

// Distinctive strings: none of them may appear, whole or in part, in any admin answer.
const REDIS_PASSWORD = 'redis-pw-Zq8vX2';
const FILE_HEADER_SECRET = 'file-header-K7m3Pa';
const ENV_HEADER_SECRET = 'env-header-W4n9Tb';
const NAMED_SERVICE_SECRET = 'billing-key-R2d5Hc';
const ENV_HEADER_VARIABLE = 'HG_TEST_ADMIN_UPSTREAM_KEY';
const SECRETS = [REDIS_PASSWORD, FILE_HEADER_SECRET, ENV_HEADER_SECRET, NAMED_SERVICE_SECRET];

/** Every admin answer's body, whole: a secret must be in none of them. */
function assertNoSecret(answer: HttpAnswer, secrets: readonly string[]): void {
  const { text } = answer;
  for (const secret of secrets) {
    assert.equal(text.includes(secret), false, `"${secret}" leaked into ${text}`);
    assert.equal(text.includes(secret.slice(0, 8)), false, `part of "${secret}" leaked into ${text}`);
  }
}

interface World {
  readonly gateway: Gateway;
  readonly adminUrl: string;
  close(): Promise<void>;
}

/** A real gateway from a config file and an environment, as main.ts loads them, with its admin listener on port 0. */
async function startWorld(dir: string, file: Record<string, unknown>, env: Record<string, string>): Promise<World> {
  const path = join(dir, 'hypergate.json');
  writeFileSync(path, JSON.stringify(file));
  const fullEnv = { HYPERGATE_SERVER_PORT: '0', HYPERGATE_SERVER_HOST: '127.0.0.1', HYPERGATE_ADMIN_PORT: '0', ...env };
  const reread = () => loadConfig({ file: path, env: fullEnv });
  const gateway = await createGateway(reread(), { reread });
  await gateway.listen();
  return { gateway, adminUrl: `http://127.0.0.1:${gateway.adminAddress()?.port}`, close: () => gateway.close(0) };
}

describe('the admin API: GET /config, /routes and /resources/<name>', { skip: redisSkip }, () => {
  let dir: string;
  let key: TestKey;
  let jwks: JwksServer;
  let upstream: TestUpstream;
  let redis: RedisServer;
  let world: World;
  let admin: Record<string, string>;
  let reader: Record<string, string>;
  let file: Record<string, unknown>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hypergate-admin-api-'));
    process.env[ENV_HEADER_VARIABLE] = ENV_HEADER_SECRET;
    key = await makeKey('ES256');
    jwks = await startJwksServer([key.publicJwk]);
    upstream = await startTestUpstream();
    redis = await startRedis(['--requirepass', REDIS_PASSWORD]);
    file = {
      upstream: { url: upstream.url, headers: { 'X-Service-Token': FILE_HEADER_SECRET, 'X-Api-Key': { env: ENV_HEADER_VARIABLE } } },
      upstreams: { files: { url: upstream.url, headers: { 'X-Billing-Key': NAMED_SERVICE_SECRET } } },
      auth: { jwksUrl: jwks.url },
      routes: { downloads: { path: '/api/downloads/{path*}', methods: ['GET', 'POST'], service: 'files', upstream: '/files/{path*}', scope: 'files:read' } },
    };
    world = await startWorld(dir, file, {
      HYPERGATE_REDIS_URL: `redis://default:${REDIS_PASSWORD}@127.0.0.1:${redis.port}`,
      [ENV_HEADER_VARIABLE]: ENV_HEADER_SECRET,
    });
    admin = bearer(await signToken(key, { claims: { sub: 'ops', scope: 'hypergate:admin' } }));
    reader = bearer(await signToken(key));
  });
  after(async () => {
    await world?.close();
    await redis?.close();
    await upstream?.close();
    await jwks?.close();
    delete process.env[ENV_HEADER_VARIABLE];
    rmSync(dir, { recursive: true, force: true });
  });

  const PATHS = ['/config', '/routes', '/resources/customers', '/resources/orders'];

  it('refuses each answer without a token (401) and with a token that lacks the admin scope (403)', async () => {
    for (const path of [...PATHS, '/resources/nothing']) {
      const anonymous = await get(`${world.adminUrl}${path}`);
      assert.equal(anonymous.status, 401, path);
      assert.match(String(anonymous.headers['www-authenticate']), /^Bearer realm="hypergate"/);
      const forbidden = await get(`${world.adminUrl}${path}`, reader);
      assert.equal(forbidden.status, 403, path);
      assert.equal(problemOf(forbidden).code, 'HG_ERR_AUTH_INSUFFICIENT_SCOPE');
      assertNoSecret(anonymous, SECRETS);
      assertNoSecret(forbidden, SECRETS);
    }
  });

  it('answers JSON, never stored, and HEAD with the same head and no body; other methods get 405', async () => {
    for (const path of PATHS) {
      const res = await get(`${world.adminUrl}${path}`, admin);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.headers['cache-control'], 'no-store');
      const head = await get(`${world.adminUrl}${path}`, admin, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], res.headers['content-length']);
      assert.equal(head.text, '');
      const post = await get(`${world.adminUrl}${path}`, admin, 'POST');
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET, HEAD');
    }
  });

  it('shows the effective config with every secret as [redacted], from the file and from the environment', async () => {
    const res = await get(`${world.adminUrl}/config`, admin);
    assertNoSecret(res, SECRETS);
    const body = res.json() as { generation: number; appliedAt: string; config: Record<string, Record<string, unknown>> };
    assert.equal(body.generation, 1);
    assert.ok(!Number.isNaN(Date.parse(body.appliedAt)));
    const { config } = body;
    assert.equal(config.redis?.url, `redis://[redacted]@127.0.0.1:${redis.port}`);
    assert.deepEqual(config.upstream?.headers, { 'X-Service-Token': '[redacted]', 'X-Api-Key': '[redacted]' });
    assert.deepEqual((config.upstreams?.files as { headers: unknown }).headers, { 'X-Billing-Key': '[redacted]' });
    assert.equal(config.auth?.jwksUrl, jwks.url, 'what is not a secret is shown as in force');
    assert.equal(config.auth?.secret, null);
    assert.equal(config.server?.port, 0);
  });

  it('lists every route the router serves: items, collections, writes, the documents and the pass-through routes', async () => {
    const res = await get(`${world.adminUrl}/routes`, admin);
    assertNoSecret(res, SECRETS);
    const rows = (res.json() as { routes: Record<string, unknown>[] }).routes;
    const row = (method: string, path: string) => rows.find((r) => r.method === method && r.path === path);
    assert.deepEqual(row('GET', '/api/customers/:id'), {
      method: 'GET',
      path: '/api/customers/:id',
      scopes: ['customers:read'],
      public: false,
      body: false,
      kind: 'item',
      name: 'customers',
      service: 'upstream',
      upstream: '/customers/{id}',
      cache: { maxAgeSeconds: 60 },
    });
    assert.equal(row('HEAD', '/api/customers/:id')?.kind, 'item');
    assert.equal(row('GET', '/api/customers')?.kind, 'collection');
    assert.equal(row('GET', '/api/customers/:customerId/orders/:id')?.name, 'orders');
    const create = row('POST', '/api/customers');
    assert.equal(create?.kind, 'collection');
    assert.equal(create?.body, true);
    assert.equal(create?.cache, null, 'a write is never stored');
    assert.equal(row('DELETE', '/api/customers/:id')?.kind, 'item');
    assert.equal(row('GET', '/api')?.kind, 'document');
    assert.ok(rows.some((r) => r.kind === 'document' && String(r.path).includes('openapi')));
    const download = row('POST', '/api/downloads/*');
    assert.deepEqual(download, {
      method: 'POST',
      path: '/api/downloads/*',
      scopes: ['files:read'],
      public: false,
      body: true,
      kind: 'pass-through',
      name: 'downloads',
      service: 'files',
      upstream: '/files/{path*}',
      cache: null,
    });
    // The same table the router serves (and the OpenAPI document reads): one row per definition.
    assert.deepEqual(
      rows.map((r) => `${String(r.method)} ${String(r.path)}`),
      world.gateway.routes.map((r) => `${r.method} ${r.path}`),
    );
  });

  it("shows one resource's declaration and what it was compiled to", async () => {
    const res = await get(`${world.adminUrl}/resources/customers`, admin);
    assertNoSecret(res, SECRETS);
    const body = res.json() as { name: string; generation: number; declaration: Record<string, unknown>; compiled: Record<string, unknown> };
    assert.equal(body.name, 'customers');
    assert.equal(body.declaration.path, '/api/customers/{id}');
    assert.equal(body.compiled.service, 'upstream');
    assert.equal(body.compiled.scope, 'customers:read');
    assert.equal(body.compiled.maxAgeSeconds, 60);
    assert.deepEqual((body.compiled.item as { params: unknown }).params, { id: 'integer' });
  });

  it('answers 404 for a resource name no declaration has, naming the closest one', async () => {
    const res = await get(`${world.adminUrl}/resources/custmers`, admin);
    assert.equal(res.status, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.match(problemOf(res).detail, /did you mean "customers"\?/);
    const none = await get(`${world.adminUrl}/resources/zzzzzzzzzz`, admin);
    assert.equal(none.status, 404);
    assert.match(problemOf(none).detail, /declared: customers, orders/);
  });

  it('shows the new generation after a reload', async () => {
    writeFileSync(join(dir, 'hypergate.json'), JSON.stringify({ ...file, cache: { maxAgeSeconds: 17 } }));
    const reload = await get(`${world.adminUrl}/reload`, admin, 'POST');
    assert.equal(reload.status, 200);
    const config = (await get(`${world.adminUrl}/config`, admin)).json() as { generation: number; config: { cache: { maxAgeSeconds: number } } };
    assert.equal(config.generation, 2);
    assert.equal(config.config.cache.maxAgeSeconds, 17);
    const routes = (await get(`${world.adminUrl}/routes`, admin)).json() as { generation: number; routes: { method: string; path: string; cache: unknown }[] };
    assert.equal(routes.generation, 2);
    assert.deepEqual(routes.routes.find((r) => r.method === 'GET' && r.path === '/api/customers/:id')?.cache, { maxAgeSeconds: 17 });
    const resource = await get(`${world.adminUrl}/resources/customers`, admin);
    assertNoSecret(resource, SECRETS);
    assert.equal((resource.json() as { compiled: { maxAgeSeconds: number } }).compiled.maxAgeSeconds, 17);
  });
});

describe('the admin API with an HMAC secret from the environment', () => {
  const SECRET = 'hmac-secret-from-env-Jx5rQ8pL2vN6tY9wB3cF7';
  let dir: string;
  let world: World;
  let upstream: TestUpstream;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hypergate-admin-secret-'));
    upstream = await startTestUpstream();
    world = await startWorld(dir, { upstream: { url: upstream.url }, auth: { algorithms: ['HS256'] } }, { HYPERGATE_AUTH_SECRET: SECRET });
  });
  after(async () => {
    await world?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const sign = (scope: string): Promise<string> =>
    new SignJWT({ sub: 'ops', scope })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(SECRET));

  it('shows auth.secret as [redacted] and the secret in no answer', async () => {
    const admin = bearer(await sign('hypergate:admin'));
    const config = await get(`${world.adminUrl}/config`, admin);
    assert.equal(config.status, 200);
    assert.equal((config.json() as { config: { auth: { secret: string } } }).config.auth.secret, '[redacted]');
    for (const path of ['/config', '/routes', '/resources/customers', '/resources/orders', '/resources/nope']) {
      assertNoSecret(await get(`${world.adminUrl}${path}`, admin), [SECRET]);
    }
    assert.equal((await get(`${world.adminUrl}/config`, bearer(await sign('customers:read')))).status, 403);
  });
});
