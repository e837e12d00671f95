import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, get, send, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { metric, until } from '../helpers/shared-world.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const BURST = 3;

/**
 * Two gateways of two tenants on one Redis and one redis.keyPrefix, each trusting its own key
 * source: a subject named alike in both (`alice`) is two people. Neither's idempotency records nor
 * rate buckets are the other's.
 */
describe('gateways with different key sources on one redis.keyPrefix (Redis)', { skip: redisSkip }, () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  const keys: TestKey[] = [];
  const jwks: JwksServer[] = [];
  const gateways: RunningGateway[] = [];

  before(async () => {
    redis = await startRedis();
    upstream = await startTestUpstream();
    for (let tenant = 0; tenant < 2; tenant++) {
      const key = await makeKey('ES256');
      const server = await startJwksServer([key.publicJwk]);
      keys.push(key);
      jwks.push(server);
      const gw = await startGateway({
        upstream: { url: upstream.url },
        auth: { jwksUrl: server.url },
        redis: { url: redis.url, keyPrefix: 'tenants:', timeoutMs: 250 },
        rateLimit: { requestsPerSecond: 1, burst: BURST },
        // Each client its own address, so only subjects can share a bucket.
        server: { trustProxy: ['127.0.0.1'] },
        log: { access: false },
      });
      gateways.push(gw);
      await until(async () => (await metric(gw, 'hypergate_redis_up')) === 1, 'the gateway to reach Redis');
    }
  });
  after(async () => {
    for (const gw of gateways) await gw.close();
    for (const server of jwks) await server.close();
    await upstream?.close();
    await redis?.close();
  });

  let clients = 0;
  const as = async (tenant: number, sub: string): Promise<Record<string, string>> => ({
    ...bearer(await signToken(keys[tenant] as TestKey, { claims: { sub, scope: 'customers:read customers:write' } })),
    'x-forwarded-for': `10.0.${tenant}.${++clients}`,
  });
  const urlOf = (tenant: number, path: string): string => `${gateways[tenant]?.url as string}${path}`;

  it("keeps each tenant's Idempotency-Key records apart: the other tenant's alice gets her own write", async () => {
    const body = '{"name":"Alice","status":"active"}';
    const keyed = { 'content-type': 'application/json', 'idempotency-key': '"same-key"' };
    upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 601, name: 'Alice', status: 'active' } });
    const first = await send(urlOf(0, '/api/customers'), 'POST', { ...(await as(0, 'alice')), ...keyed }, body);
    assert.equal(first.headers['location'], '/api/customers/601');
    upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 602, name: 'Alice', status: 'active' } });
    const second = await send(urlOf(1, '/api/customers'), 'POST', { ...(await as(1, 'alice')), ...keyed }, body);
    assert.equal(second.status, 201);
    assert.equal(second.headers['location'], '/api/customers/602', "not the other tenant's stored answer");
    assert.equal(upstream.requests.filter((r) => r.method === 'POST').length, 2);
  });

  it("keeps each tenant's rate buckets apart: one tenant's bob does not spend the other's", async () => {
    const bobOne = await as(0, 'bob');
    for (let n = 0; n < BURST; n++) assert.equal((await get(urlOf(0, '/api/customers/1'), bobOne)).status, 200);
    assert.equal((await get(urlOf(0, '/api/customers/1'), bobOne)).status, 429, 'his own bucket is spent');
    assert.equal((await get(urlOf(1, '/api/customers/1'), await as(1, 'bob'))).status, 200);
  });
});
