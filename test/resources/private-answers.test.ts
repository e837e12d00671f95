import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, type HttpAnswer } from '../helpers/gateway.ts';
import type { UpstreamBehaviour } from '../helpers/upstream.ts';
import { gate, waitFor } from '../helpers/wait.ts';

/**
 * An answer a shared cache may not store (RFC 9111 section 3) is one user's: it must not reach
 * another user through single-flight, the one load per path concurrent misses share.
 */
describe('answers a shared cache may not store', () => {
  let fx: Fixture;
  let alice: Record<string, string>;
  let bob: Record<string, string>;

  before(async () => {
    // Declared shared: what is tested here is single-flight's own rule, not the cache key's (identity.test.ts).
    fx = await startFixture({ upstream: { forwardClaims: { 'X-Subject': 'sub' } }, resources: { customers: { sharedAcrossIdentities: true } } });
    alice = bearer(await fx.token({ claims: { sub: 'alice' } }));
    bob = bearer(await fx.token({ claims: { sub: 'bob' } }));
    // Both tokens verified once, so each request below reaches the cache without waiting.
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, alice)).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bob)).status, 200);
  });
  after(() => fx.close());

  const personal = (name: string, headers: Record<string, string>): UpstreamBehaviour => ({ kind: 'json', body: { id: 7, name, status: 'active' }, headers });

  /** Alice's read held at the upstream, Bob's read of the same path arriving meanwhile; then the upstream answers. */
  async function overlapping(path: string, cacheControl: string): Promise<{ alice: HttpAnswer; bob: HttpAnswer; subjects: unknown[] }> {
    fx.upstream.reset();
    const held = gate();
    const headers = { 'cache-control': cacheControl };
    fx.upstream.on(`/customers/7`, {
      kind: 'sequence',
      steps: [{ kind: 'wait', until: held.promise, then: personal("Alice's", headers) }, personal("Bob's", headers)],
    });
    const first = get(`${fx.gw.url}${path}`, alice);
    await waitFor(() => fx.upstream.active() === 1, "Alice's request at the upstream");
    const second = get(`${fx.gw.url}${path}`, bob);
    // Bob's token is verified already: once his request is in the gateway it has met Alice's load.
    await waitFor(() => fx.gw.gateway.metrics.inFlight === 2, "Bob's request in the gateway");
    held.open();
    const [a, b] = await Promise.all([first, second]);
    return { alice: a, bob: b, subjects: fx.upstream.headersSeen.map((h) => h['x-subject']) };
  }

  for (const cacheControl of ['private', 'no-store', 'no-cache', 'private, max-age=60']) {
    test(`a "${cacheControl}" answer serves only the request that caused it: one arriving during its load fetches for itself, with its own identity`, async () => {
      const { alice: a, bob: b, subjects } = await overlapping('/api/customers/7', cacheControl);
      assert.equal(a.status, 200);
      assert.equal(b.status, 200);
      assert.equal((a.json() as { name: string }).name, "Alice's");
      assert.equal((b.json() as { name: string }).name, "Bob's", "Bob never gets Alice's private body");
      assert.deepEqual(subjects, ['alice', 'bob'], 'the upstream was asked twice, once with each identity');
      assert.equal(b.headers['cache-control'], 'no-store');
      assert.equal(b.headers['cache-status'], 'hypergate; fwd=miss', 'his own request went forward: not collapsed');
    });
  }

  test('a storable answer is still shared by the requests that overlap its load', async () => {
    const { alice: a, bob: b, subjects } = await overlapping('/api/customers/7', 'max-age=30');
    assert.equal((b.json() as { name: string }).name, "Alice's");
    assert.deepEqual(subjects, ['alice']);
    assert.equal(a.headers['cache-status'], 'hypergate; fwd=miss; stored');
    assert.equal(b.headers['cache-status'], 'hypergate; fwd=miss; stored; collapsed');
  });
});

/**
 * With forwardAuthorization the upstream sees the client's token, so its answer may depend on it:
 * a shared cache keeps such an answer only when the upstream says so (RFC 9111 section 3.5).
 */
describe("answers to requests that carried the client's Authorization", () => {
  let fx: Fixture;
  let alice: Record<string, string>;
  let bob: Record<string, string>;

  before(async () => {
    // Declared shared: what is tested here is which answers may be stored at all; without it each subject has its own entries (identity.test.ts).
    fx = await startFixture({ upstream: { forwardAuthorization: true }, resources: { customers: { sharedAcrossIdentities: true } } });
    alice = bearer(await fx.token({ claims: { sub: 'alice' } }));
    bob = bearer(await fx.token({ claims: { sub: 'bob' } }));
  });
  after(() => fx.close());

  test('are neither stored nor shared unless the upstream says public, s-maxage or must-revalidate', async () => {
    fx.upstream.on('/customers/8', { kind: 'json', body: { id: 8, name: 'Mine', status: 'active' }, headers: { 'cache-control': 'max-age=30' } });
    const first = await get(`${fx.gw.url}/api/customers/8`, alice);
    assert.equal(first.headers['cache-control'], 'no-store');
    assert.equal((await get(`${fx.gw.url}/api/customers/8`, bob)).headers['cache-status'], 'hypergate; fwd=miss');
    assert.equal(fx.upstream.hits('/customers/8'), 2);
    assert.deepEqual(
      fx.upstream.headersSeen.filter((_, i) => fx.upstream.paths[i] === '/customers/8').map((h) => h['authorization']),
      [alice['authorization'], bob['authorization']],
    );
  });

  for (const cacheControl of ['public, max-age=30', 's-maxage=30', 'max-age=30, must-revalidate']) {
    test(`are stored when the upstream says "${cacheControl}"`, async () => {
      fx.upstream.reset();
      fx.upstream.on('/customers/9', { kind: 'json', body: { id: 9, name: 'Ours', status: 'active' }, headers: { 'cache-control': cacheControl } });
      await fx.gw.gateway.purge('/api/customers/9');
      assert.equal((await get(`${fx.gw.url}/api/customers/9`, alice)).headers['cache-control'], 'max-age=30');
      assert.match(String((await get(`${fx.gw.url}/api/customers/9`, bob)).headers['cache-status']), /^hypergate; hit/);
      assert.equal(fx.upstream.hits('/customers/9'), 1);
    });
  }
});
