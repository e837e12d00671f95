import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mergeConfig } from '../../src/config/load.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { configWith } from '../../src/gateway/load-config.ts';

/** The value with the keys of every section in reverse order (lists keep theirs). */
const reordered = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(reordered);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, inner]) => [key, reordered(inner)]),
  );
};

describe('the response cache across a reload', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  before(async () => {
    fx = await startFixture({});
    auth = bearer(await fx.token({ expiresIn: 3600 }));
  });
  after(() => fx.close());

  const reload = (overrides: unknown) => fx.gw.gateway.reload(configWith(mergeConfig(fx.gw.gateway.config, overrides)));
  const read = async (id: number) => (await get(`${fx.gw.url}/api/customers/${id}`, auth)).json() as Record<string, unknown>;

  test('a reload that changes nothing the entries were rendered with keeps them', async () => {
    await read(1);
    const hits = fx.upstream.hits('/customers/1');
    await reload({ log: { level: 'warn' } });
    await read(1);
    assert.equal(fx.upstream.hits('/customers/1'), hits, 'answered from the kept cache');
  });

  test('a reload that only reorders the keys of its sections changes nothing and keeps the entries', async () => {
    // Validation writes the keys it knows in its own order; the names in a map (headers here) keep the file's.
    await reload({ upstreams: { billing: { url: fx.upstream.url, headers: { 'x-one': '1', 'x-two': '2' } } } });
    await read(5);
    const hits = fx.upstream.hits('/customers/5');
    const next = configWith(reordered(fx.gw.gateway.config));
    assert.deepEqual(Object.keys(next.upstreams['billing']?.headers ?? {}), ['x-two', 'x-one']);
    const result = await fx.gw.gateway.reload(next);
    assert.deepEqual(result.changed, []);
    await read(5);
    assert.equal(fx.upstream.hits('/customers/5'), hits, 'answered from the kept cache');
  });

  test('a reload that exposes another field drops the entries rendered without it', async () => {
    assert.equal('email' in (await read(2)), false);
    await reload({ resources: { customers: { exposeFields: ['email'] } } });
    assert.equal((await read(2))['email'], 'c2@example.com');
  });

  test('a reload that hides a field again never serves the entry that had it', async () => {
    assert.equal((await read(3))['email'], 'c3@example.com');
    await reload({ resources: { customers: { exposeFields: [] } } });
    assert.equal('email' in (await read(3)), false);
  });

  test('a reload that turns CORS on drops entries whose Vary lacks Origin', async () => {
    await read(4);
    await reload({ cors: { origins: ['https://app.example'] } });
    const res = await get(`${fx.gw.url}/api/customers/4`, auth);
    assert.equal(res.headers['vary'], 'Accept, Origin');
  });
});
