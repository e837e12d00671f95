import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, type HttpAnswer } from '../helpers/gateway.ts';
import { startTenantUpstream, type TenantUpstream } from '../helpers/tenant-upstream.ts';
import { waitFor } from '../helpers/wait.ts';

const nameOf = (answer: HttpAnswer): string => (answer.json() as { name: string }).name;

/** A gateway whose default service is a tenant-aware upstream, with `overrides` on top. */
async function tenantWorld(overrides: Record<string, unknown>): Promise<{ fx: Fixture; up: TenantUpstream; close(): Promise<void> }> {
  const up = await startTenantUpstream();
  const base = overrides['upstream'] as Record<string, unknown> | undefined;
  const fx = await startFixture({ ...overrides, upstream: { ...base, url: up.url } });
  return { fx, up, close: async () => Promise.all([fx.close(), up.close()]).then(() => undefined) };
}

/**
 * A resource whose service is sent the token's tenant varies by it (implicitly): each tenant has
 * its own entries, and no tier, no shared load and no 304 ever answers one tenant with another's.
 */
describe('a resource that varies by a forwarded claim', () => {
  let world: Awaited<ReturnType<typeof tenantWorld>>;
  let fx: Fixture;
  let a1: Record<string, string>;
  let a2: Record<string, string>;
  let b: Record<string, string>;
  const url = (id: number): string => `${fx.gw.url}/api/customers/${id}`;

  before(async () => {
    world = await tenantWorld({ upstream: { forwardClaims: { 'X-Tenant': 'tenant' } } });
    fx = world.fx;
    a1 = bearer(await fx.token({ claims: { sub: 'ann', tenant: 'a' } }));
    a2 = bearer(await fx.token({ claims: { sub: 'al', tenant: 'a' } }));
    b = bearer(await fx.token({ claims: { sub: 'bea', tenant: 'b' } }));
  });
  after(() => world.close());

  test('each tenant reads its own entry; users of one tenant share it', async () => {
    const first = await get(url(1), a1);
    assert.equal(nameOf(first), 'a en');
    assert.equal(first.headers['cache-status'], 'hypergate; fwd=miss; stored');
    const other = await get(url(1), b);
    assert.equal(nameOf(other), 'b en', "tenant b never gets tenant a's entry");
    assert.equal(other.headers['cache-status'], 'hypergate; fwd=miss; stored');
    const again = await get(url(1), a2);
    assert.equal(nameOf(again), 'a en');
    assert.match(String(again.headers['cache-status']), /^hypergate; hit/);
    assert.match(String((await get(url(1), b)).headers['cache-status']), /^hypergate; hit/);
    assert.deepEqual(
      world.up.seen.map((h) => h['x-tenant']),
      ['a', 'b'],
    );
  });

  test("a 304 confirms only the asker's own entry", async () => {
    const a = await get(url(2), a1);
    const bAnswer = await get(url(2), { ...b, 'if-none-match': String(a.headers['etag']) });
    assert.equal(bAnswer.status, 200, "tenant a's ETag does not match tenant b's entry");
    assert.equal(nameOf(bAnswer), 'b en');
    assert.notEqual(bAnswer.headers['etag'], a.headers['etag']);
    assert.equal((await get(url(2), { ...a2, 'if-none-match': String(a.headers['etag']) })).status, 304);
  });

  test('single-flight joins loads of the same identity only', async () => {
    world.up.seen.length = 0;
    const release = world.up.hold();
    const first = get(url(3), a1);
    await waitFor(() => world.up.seen.length === 1, "tenant a's load at the upstream");
    const sameTenant = get(url(3), a2);
    const otherTenant = get(url(3), b);
    await waitFor(() => world.up.seen.length === 2, "tenant b's own load at the upstream");
    await waitFor(() => fx.gw.gateway.metrics.inFlight === 3, 'all three requests in the gateway');
    release();
    const [a, a2Answer, bAnswer] = await Promise.all([first, sameTenant, otherTenant]);
    assert.equal(nameOf(a), 'a en');
    assert.equal(nameOf(a2Answer), 'a en');
    assert.equal(a2Answer.headers['cache-status'], 'hypergate; fwd=miss; stored; collapsed');
    assert.equal(nameOf(bAnswer), 'b en');
    assert.equal(bAnswer.headers['cache-status'], 'hypergate; fwd=miss; stored', 'not collapsed into tenant a');
    assert.deepEqual(
      world.up.seen.map((h) => h['x-tenant']),
      ['a', 'b'],
    );
  });

  test("a purge of the path drops every tenant's entry", async () => {
    await get(url(4), a1);
    await get(url(4), b);
    const purged = await fx.gw.gateway.purge('/api/customers/4');
    assert.equal(purged.purged, 2);
    assert.equal((await get(url(4), a1)).headers['cache-status'], 'hypergate; fwd=miss; stored');
    assert.equal((await get(url(4), b)).headers['cache-status'], 'hypergate; fwd=miss; stored');
  });

  test('a collection page is kept per tenant, and so are the items it caches', async () => {
    const page = await get(`${fx.gw.url}/api/customers`, a1);
    const names = (answer: HttpAnswer): string[] => (answer.json() as { items: { name: string }[] }).items.map((i) => i.name);
    assert.deepEqual(names(page), ['a list', 'a list']);
    assert.deepEqual(names(await get(`${fx.gw.url}/api/customers`, b)), ['b list', 'b list']);
    const item = await get(url(1), a2);
    assert.match(String(item.headers['cache-status']), /^hypergate; hit/);
    assert.equal(nameOf(item), 'a list', "tenant a's page filled tenant a's item entries");
    const itemB = await get(url(2), b);
    assert.equal(nameOf(itemB), 'b list', "tenant b's page filled tenant b's, not tenant a's");
  });

  test("whether the item a collection lies below exists is answered for the asker's own tenant", async () => {
    const forA = await get(`${fx.gw.url}/api/customers/901/orders`, a1);
    const forB = await get(`${fx.gw.url}/api/customers/901/orders`, b);
    assert.equal(forA.status, 404);
    assert.equal(forB.status, 404);
    const typeOf = (answer: HttpAnswer): string => (answer.json() as { type: string }).type;
    assert.doesNotMatch(typeOf(forA), /customer-not-found/, 'tenant a has customer 901, without orders');
    assert.match(typeOf(forB), /customer-not-found/, "tenant b is not told tenant a's customer exists");
  });

  test('a token without the claim is one identity of its own, not any tenant', async () => {
    await get(url(5), a1);
    const none = await get(url(5), bearer(await fx.token({ claims: { sub: 'nobody' } })));
    assert.equal(nameOf(none), 'nobody en');
  });
});

describe('a resource that declares its vary', () => {
  let world: Awaited<ReturnType<typeof tenantWorld>>;
  let token: Record<string, string>;
  const url = (id: number): string => `${world.fx.gw.url}/api/customers/${id}`;

  before(async () => {
    world = await tenantWorld({
      upstream: { forwardClaims: { 'X-Tenant': 'tenant' } },
      resources: { customers: { vary: { claims: ['tenant'], headers: ['Accept-Language'] } } },
    });
    token = bearer(await world.fx.token({ claims: { tenant: 'a' } }));
  });
  after(() => world.close());

  test('a varying request header is part of the key (normalised) and named in Vary', async () => {
    const en = await get(url(1), { ...token, 'accept-language': 'en' });
    assert.equal(en.headers['vary'], 'Accept, Accept-Language');
    assert.equal((await get(url(1), { ...token, 'accept-language': 'de' })).headers['cache-status'], 'hypergate; fwd=miss; stored');
    const spelt = await get(url(1), { ...token, 'accept-language': '  DE ' });
    assert.match(String(spelt.headers['cache-status']), /^hypergate; hit/);
    assert.equal(spelt.headers['vary'], 'Accept, Accept-Language');
    assert.equal(world.up.seen.length, 2);
  });

  test('the OpenAPI document says what the cache keeps apart', async () => {
    const doc = (await get(`${world.fx.gw.url}/api/openapi.json`, token)).json() as { paths: Record<string, { get: { description: string } }> };
    assert.match(
      doc.paths['/api/customers/{id}']?.get.description ?? '',
      /separately for each value of the token's tenant claim and the Accept-Language header/,
    );
  });
});

describe('a resource declared shared across identities', () => {
  let world: Awaited<ReturnType<typeof tenantWorld>>;

  before(async () => {
    world = await tenantWorld({ upstream: { forwardClaims: { 'X-Tenant': 'tenant' } }, resources: { customers: { sharedAcrossIdentities: true } } });
  });
  after(() => world.close());

  test('keeps one entry per path whoever asks', async () => {
    const { fx } = world;
    await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: { tenant: 'a' } })));
    const b = await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: { tenant: 'b' } })));
    assert.match(String(b.headers['cache-status']), /^hypergate; hit/);
    assert.equal(nameOf(b), 'a en');
  });
});

/** With forwardAuthorization the answer may depend on the token: it varies by its subject, and is stored only when the upstream allows a shared cache to. */
describe("a service that forwards the client's Authorization", () => {
  let fx: Fixture;

  before(async () => {
    fx = await startFixture({ upstream: { forwardAuthorization: true } });
  });
  after(() => fx.close());

  test('keys its resources by the token subject', async () => {
    fx.upstream.on('/customers/9', { kind: 'json', body: { id: 9, name: 'Ours', status: 'active' }, headers: { 'cache-control': 'public, max-age=30' } });
    const alice = bearer(await fx.token({ claims: { sub: 'alice' } }));
    const bob = bearer(await fx.token({ claims: { sub: 'bob' } }));
    assert.equal((await get(`${fx.gw.url}/api/customers/9`, alice)).headers['cache-status'], 'hypergate; fwd=miss; stored');
    assert.equal((await get(`${fx.gw.url}/api/customers/9`, bob)).headers['cache-status'], 'hypergate; fwd=miss; stored');
    assert.match(String((await get(`${fx.gw.url}/api/customers/9`, alice)).headers['cache-status']), /^hypergate; hit/);
    assert.equal(fx.upstream.hits('/customers/9'), 2);
  });
});

/** forwardHeaders passes the client's header on, and the resource then varies by it without declaring so. */
describe('a service that forwards a request header', () => {
  let world: Awaited<ReturnType<typeof tenantWorld>>;

  before(async () => {
    world = await tenantWorld({ upstream: { forwardHeaders: ['Accept-Language'], forwarded: true } });
  });
  after(() => world.close());

  test('sends it, keys the cache by it and names it in Vary', async () => {
    const { fx, up } = world;
    const token = bearer(await fx.token());
    const de = await get(`${fx.gw.url}/api/customers/1`, { ...token, 'accept-language': 'de', cookie: 'secret=1' });
    assert.equal(nameOf(de), 'nobody de');
    assert.equal(de.headers['vary'], 'Accept, Accept-Language');
    const fr = await get(`${fx.gw.url}/api/customers/1`, { ...token, 'accept-language': 'fr' });
    assert.equal(nameOf(fr), 'nobody fr', 'another language is another entry');
    assert.match(String((await get(`${fx.gw.url}/api/customers/1`, { ...token, 'accept-language': 'de' })).headers['cache-status']), /^hypergate; hit/);
    assert.equal(up.seen.length, 2);
    const seen = up.seen[0]!;
    assert.equal(seen['cookie'], undefined, 'only the allowlisted header goes');
    assert.equal(seen['forwarded'], 'for=127.0.0.1;proto=http');
    assert.equal(seen['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen['x-forwarded-proto'], 'http');
  });

  test('a client-sent X-Forwarded-For is not believed from an untrusted peer', async () => {
    const { fx, up } = world;
    up.seen.length = 0;
    await get(`${fx.gw.url}/api/customers/2`, { ...bearer(await fx.token()), 'x-forwarded-for': '10.9.9.9', 'x-forwarded-proto': 'https' });
    assert.equal(up.seen[0]?.['x-forwarded-for'], '127.0.0.1');
    assert.equal(up.seen[0]?.['forwarded'], 'for=127.0.0.1;proto=http');
  });
});

/** An item read with a declared query is kept per identity too, and the upstream is asked the query alone. */
describe('a varying resource that declares query parameters', () => {
  let world: Awaited<ReturnType<typeof tenantWorld>>;

  before(async () => {
    world = await tenantWorld({
      upstream: { forwardClaims: { 'X-Tenant': 'tenant' } },
      resources: { customers: { query: { currency: { type: 'enum', values: ['EUR', 'USD'], default: 'EUR' } } } },
    });
  });
  after(() => world.close());

  test("each tenant's query has its own entry, and the upstream gets the query without the identity", async () => {
    const fx = world.fx;
    const a1 = bearer(await fx.token({ claims: { sub: 'ann', tenant: 'a' } }));
    const a2 = bearer(await fx.token({ claims: { sub: 'al', tenant: 'a' } }));
    const b = bearer(await fx.token({ claims: { sub: 'bea', tenant: 'b' } }));
    const url = `${fx.gw.url}/api/customers/1?currency=USD`;
    assert.equal(nameOf(await get(url, a1)), 'a en');
    const other = await get(url, b);
    assert.equal(nameOf(other), 'b en', "tenant b never gets tenant a's entry");
    assert.equal(other.headers['cache-status'], 'hypergate; fwd=miss; stored');
    const again = await get(url, a2);
    assert.equal(nameOf(again), 'a en');
    assert.match(String(again.headers['cache-status']), /^hypergate; hit/);
    assert.deepEqual(world.up.urls, ['/customers/1?currency=USD', '/customers/1?currency=USD']);
  });
});
