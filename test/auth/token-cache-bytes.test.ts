import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mergeConfig } from '../../src/config/load.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { sample } from '../helpers/metrics.ts';
import { configWith } from '../../src/gateway/load-config.ts';

const MAX_BYTES = 64 * 1024;

/**
 * Item 9 of the hardening issue: the verified-token cache is bounded by bytes, each token charged
 * what its entry holds (no token: the key is its digest); a principal keeps only what the gateway
 * reads; long tokens are not cached.
 */
describe('the verified-token cache by bytes', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({
      // Room for 5,000 scopes in one token.
      server: { maxHeaderBytes: 131072 },
      auth: { tokenCacheMaxBytes: MAX_BYTES, maxTokenBytes: 65536 },
    });
  });
  after(() => fx.close());

  const reload = (overrides: unknown) => fx.gw.gateway.reload(configWith(mergeConfig(fx.gw.gateway.config, overrides)));
  const verifications = async (): Promise<number> =>
    sample(await fx.gw.gateway.metrics.text(), 'hypergate_token_verifications_total', { result: 'ok' }) ?? Number.NaN;

  test('tokens with a large groups claim fill auth.tokenCacheMaxBytes, each charged the same few hundred bytes whatever its length', async () => {
    // 64 KiB (the least allowed) holds ~230 entries: 300 tokens overflow it.
    const { verifier } = fx.gw.gateway;
    const groups = Array.from({ length: 220 }, (_, i) => `group-${i}`);
    const tokens: string[] = [];
    for (let i = 0; i < 300; i++) {
      const token = await fx.token({ claims: { sub: `g${i}`, groups } });
      tokens.push(token);
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    }
    assert.ok((tokens[0] as string).length > 3000 && (tokens[0] as string).length <= 4096, `tokens of ${(tokens[0] as string).length} characters`);
    assert.ok(verifier.cachedBytes <= MAX_BYTES, `${verifier.cachedBytes} bytes cached`);
    const kept = tokens.filter((t) => verifier.cached(t) !== undefined);
    assert.ok(kept.length > 0 && kept.length < tokens.length, `${kept.length} of ${tokens.length} kept`);
    assert.equal(kept.length, verifier.cachedTokens);
    // The newest are the ones kept (LRU), and a 3,000-character token is charged a few hundred bytes, not its length.
    assert.equal(kept.at(-1), tokens.at(-1));
    const perToken = verifier.cachedBytes / kept.length;
    assert.ok(perToken >= 256 && perToken < 400, `${perToken} bytes charged a token of ${(tokens[0] as string).length} characters`);
    assert.equal(sample(await fx.gw.gateway.metrics.text(), 'hypergate_token_cache_bytes'), verifier.cachedBytes);
    // The recent-token table keeps tokens whole: within an eighth of the cache's bound, so two or so of these.
    assert.ok(verifier.recentBytes > 0 && verifier.recentBytes <= MAX_BYTES / 8, `${verifier.recentBytes} bytes in the recent-token table`);
  });

  test('a token longer than auth.tokenCacheMaxTokenBytes (4096) is verified on every request, never cached', async () => {
    const long = await fx.token({ claims: { sub: 'long', padding: 'x'.repeat(4000) } });
    assert.ok(long.length > 4096);
    const before = await verifications();
    for (let i = 0; i < 3; i++) assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(long))).status, 200);
    assert.equal(await verifications(), before + 3);
    assert.equal(fx.gw.gateway.verifier.cached(long), undefined);
  });

  test('a token with 5,000 scopes keeps only the scopes the gateway checks, and is charged no more than a short one', async () => {
    const { verifier } = fx.gw.gateway;
    const scopes = ['customers:read', ...Array.from({ length: 4999 }, (_, i) => `s${i}`)].join(' ');
    const many = await fx.token({ claims: { sub: 'many', scope: scopes } });
    // A gateway that caches tokens of any length, so the scopes' cost shows.
    await reload({ auth: { tokenCacheMaxTokenBytes: 65536 } });
    const fresh = fx.gw.gateway.verifier;
    assert.notEqual(fresh, verifier);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(many))).status, 200);
    const principal = fresh.cached(many);
    assert.deepEqual([...(principal?.scopes ?? [])], ['customers:read']);
    assert.ok(fresh.cachedBytes < 512, `${fresh.cachedBytes} bytes for a token of ${many.length}`);
  });

  test('an owner claim that cannot name an item is not kept: not an array, nor an overlong string', async () => {
    await reload({ auth: { ownerClaim: 'groups' } });
    const token = await fx.token({ claims: { sub: 'owner', groups: Array.from({ length: 200 }, (_, i) => `g${i}`) } });
    const principal = await fx.gw.gateway.verifier.verify(token);
    assert.deepEqual(principal.claims, [undefined]);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 403);
    const long = await fx.token({ claims: { sub: 'owner', groups: 'x'.repeat(257) } });
    assert.deepEqual((await fx.gw.gateway.verifier.verify(long)).claims, [undefined]);
  });
});
