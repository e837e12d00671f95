import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { metric, startSharedWorld, until, type SharedWorld } from '../helpers/shared-world.ts';
import type { UpstreamHeaders } from '../helpers/upstream.ts';

const EXPOSED = ['Deprecation', 'Sunset', 'Link', 'Content-Language'];
/** What the upstream sends besides its JSON: exposed headers, and ones no allowlist lets through. */
const SENT: UpstreamHeaders = {
  deprecation: '@1767225600',
  sunset: 'Wed, 30 Jun 2027 23:59:59 GMT',
  link: ['<https://docs.example/v3>; rel="successor-version"', '<https://docs.example/policy>; rel="deprecation"'],
  'set-cookie': 'session=abc',
  'x-internal-host': 'db-7.internal',
};
const LINKS = '<https://docs.example/v3>; rel="successor-version", <https://docs.example/policy>; rel="deprecation"';

describe('exposeHeaders: upstream response headers passed to the client', () => {
  let fx: Fixture;
  let reader: Record<string, string>;
  const url = (path: string): string => `${fx.gw.url}${path}`;

  before(async () => {
    fx = await startFixture({ upstream: { exposeHeaders: EXPOSED } });
    reader = bearer(await fx.token());
  });
  beforeEach(async () => {
    fx.upstream.reset();
    await fx.gw.gateway.purge(null);
    fx.upstream.on('/customers/7', { kind: 'json', body: { id: 7, name: 'Seven', status: 'active' }, headers: SENT });
  });
  after(() => fx.close());

  test('a miss passes the listed headers the upstream sent, a list sent on several lines as one, and nothing else', async () => {
    const miss = await get(url('/api/customers/7'), reader);
    assert.equal(miss.status, 200, miss.text);
    assert.match(String(miss.headers['cache-status']), /fwd=miss/);
    assert.equal(miss.headers['deprecation'], '@1767225600');
    assert.equal(miss.headers['sunset'], 'Wed, 30 Jun 2027 23:59:59 GMT');
    assert.equal(miss.headers['link'], LINKS);
    // Listed but not sent: absent. Sent but not listed, or never passed: absent.
    for (const absent of ['content-language', 'set-cookie', 'x-internal-host']) assert.equal(miss.headers[absent], undefined, absent);
  });

  test('a hit sends the headers stored with the entry, in every format', async () => {
    await get(url('/api/customers/7'), reader);
    const hit = await get(url('/api/customers/7'), reader);
    assert.match(String(hit.headers['cache-status']), /hit/);
    assert.equal(hit.headers['deprecation'], '@1767225600');
    assert.equal(hit.headers['link'], LINKS);
    const hal = await get(url('/api/customers/7'), { ...reader, accept: 'application/hal+json' });
    assert.equal(hal.headers['sunset'], 'Wed, 30 Jun 2027 23:59:59 GMT');
    assert.equal(fx.upstream.hits('/customers/7'), 1);
  });

  test('a 304 carries what RFC 9110 section 15.4.5 lists, not the exposed headers', async () => {
    const first = await get(url('/api/customers/7'), reader);
    const revalidated = await get(url('/api/customers/7'), { ...reader, 'if-none-match': String(first.headers.etag) });
    assert.equal(revalidated.status, 304);
    assert.equal(revalidated.headers.etag, first.headers.etag);
    assert.equal(revalidated.headers['cache-control'], first.headers['cache-control']);
    assert.equal(revalidated.headers['deprecation'], undefined);
    assert.equal(revalidated.headers['link'], undefined);
  });

  test('the OpenAPI document lists the exposed headers on the reads of the service, and a 304 without them', async () => {
    const doc = (await get(url('/api/openapi.json'), reader)).json() as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, { required: boolean }> }> }>>;
    };
    const read = doc.paths['/api/customers/{id}']?.['get']?.responses;
    assert.equal(read?.['200']?.headers?.['Deprecation']?.required, false);
    assert.equal(read?.['304']?.headers?.['Deprecation'], undefined);
    assert.ok(read?.['200']?.headers?.['ETag'] !== undefined);
  });

  test('a collection page passes the headers of its own answer', async () => {
    fx.upstream.on('/customers?offset=0&limit=20', { kind: 'json', body: { items: [], total: 0 }, headers: { 'content-language': 'de' } });
    const page = await get(url('/api/customers'), { ...reader, ...bearer(await fx.token({ claims: { scope: 'customers:read customers:read-any' } })) });
    assert.equal(page.status, 200, page.text);
    assert.equal(page.headers['content-language'], 'de');
  });
});

describe('exposeHeaders in config', () => {
  test('hop-by-hop headers, Set-Cookie and the headers the gateway sets itself are refused, each named', async () => {
    const { configProblems } = await import('../helpers/config.ts');
    const problems = configProblems({
      upstream: {
        exposeHeaders: ['Deprecation', 'Set-Cookie', 'Connection', 'ETag', 'Cache-Control', 'Access-Control-Allow-Origin', 'X-Request-Id', 'bad header'],
      },
    });
    const refused = (name: string): string =>
      `upstream.exposeHeaders: "${name}" is never passed to the client (a hop-by-hop header, a cookie, or one the gateway sets itself on its answers)`;
    assert.deepEqual(problems, [
      refused('Set-Cookie'),
      refused('Connection'),
      refused('ETag'),
      refused('Cache-Control'),
      refused('Access-Control-Allow-Origin'),
      refused('X-Request-Id'),
      'upstream.exposeHeaders: "bad header" is not an HTTP header name (RFC 9110 section 5.1)',
    ]);
    assert.deepEqual(configProblems({ upstreams: { shop: { url: 'http://127.0.0.1:9', exposeHeaders: ['Vary'] } } }), [
      'upstreams.shop.exposeHeaders: "Vary" is never passed to the client (a hop-by-hop header, a cookie, or one the gateway sets itself on its answers)',
    ]);
  });
});

describe('exposeHeaders across instances: the shared tier stores them with the entry', { skip: redisSkip }, () => {
  let redis: RedisServer;
  let world: SharedWorld;
  let reader: Record<string, string>;

  before(async () => {
    redis = await startRedis();
    world = await startSharedWorld(redis, 2, { upstream: { exposeHeaders: EXPOSED } });
    reader = bearer(await world.token({ expiresIn: 3600 }));
  });
  after(async () => {
    await world?.close();
    await redis?.close();
  });

  test('an instance that adopts the entry from Redis sends the headers the fetching instance got', async () => {
    world.upstream.on('/customers/21', { kind: 'json', body: { id: 21, name: 'Shared', status: 'active' }, headers: SENT });
    const stored = (): Promise<number> => metric(world.gateways[0]!, 'hypergate_shared_cache_total', { outcome: 'stored' });
    const before = await stored();
    const first = await get(`${world.gateways[0]?.url}/api/customers/21`, reader);
    assert.equal(first.headers['deprecation'], '@1767225600');
    await until(async () => (await stored()) > before, 'the entry to be shared');
    const there = await get(`${world.gateways[1]?.url}/api/customers/21`, reader);
    assert.equal(there.status, 200);
    assert.equal(world.upstream.hits('/customers/21'), 1, 'the second instance read it from the tier');
    assert.equal(there.headers['deprecation'], '@1767225600');
    assert.equal(there.headers['link'], LINKS);
    assert.equal(there.headers['set-cookie'], undefined);
  });

  test('an entry in Redis carrying a header the service does not expose is not adopted', async () => {
    world.upstream.on('/customers/22', { kind: 'json', body: { id: 22, name: 'Forged', status: 'active' }, headers: SENT });
    const stored = (): Promise<number> => metric(world.gateways[0]!, 'hypergate_shared_cache_total', { outcome: 'stored' });
    const before = await stored();
    await get(`${world.gateways[0]?.url}/api/customers/22`, reader);
    await until(async () => (await stored()) > before, 'the entry to be shared');
    // Someone with write access to Redis adds a header to the stored entry.
    const keys = (await redis.command('KEYS', `${world.prefix}*customers/22*`)) as string[];
    const key = keys.find((k) => !k.startsWith(`${world.prefix}l:`)) as string;
    const value = (await redis.command('GET', key)) as string;
    const forged = value.replace('"h":["Deprecation"', '"h":["Set-Cookie","a=b","Deprecation"');
    assert.notEqual(forged, value, 'the stored entry carries its exposed headers');
    const ttl = (await redis.command('PTTL', key)) as number;
    await redis.command('SET', key, forged, 'PX', String(ttl));
    const there = await get(`${world.gateways[1]?.url}/api/customers/22`, reader);
    assert.equal(there.status, 200);
    assert.equal(there.headers['set-cookie'], undefined);
    assert.equal(world.upstream.hits('/customers/22'), 2, 'the forged entry was refused: fetched again');
  });
});
