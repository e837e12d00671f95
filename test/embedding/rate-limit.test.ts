import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { embedOverrides, serveSales } from '../helpers/embed-world.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';

const RATE = { rateLimit: { requestsPerSecond: 1, burst: 3 } };

describe('embedded parts and the rate limit (embedding.partsCountAgainstRateLimit)', () => {
  const worlds: Fixture[] = [];
  after(() => Promise.all(worlds.map((fx) => fx.close())));
  const start = async (partsCount: boolean): Promise<{ fx: Fixture; read: (path: string) => ReturnType<typeof get> }> => {
    const fx = await startFixture(embedOverrides({ ...RATE, embedding: { partsCountAgainstRateLimit: partsCount } }));
    worlds.push(fx);
    serveSales(fx.upstream);
    const token = await fx.token({ claims: { scope: 'customers:read customers:read:any' } });
    return { fx, read: (path) => get(`${fx.gw.url}${path}`, bearer(token)) };
  };

  test('by default an answer counts once, whatever it embeds', async () => {
    const { read } = await start(false);
    const res = await read('/api/sales?embed=items.customer');
    assert.equal(res.status, 200);
    assert.equal(res.headers['embed-status'], undefined);
    assert.equal((await read('/api/customers/1')).status, 200);
    assert.equal((await read('/api/customers/1')).status, 200);
    assert.equal((await read('/api/customers/1')).status, 429, 'the fourth request of a burst of three');
  });

  test('when parts count, each takes from the bucket, and those past it are left out as rate-limited', async () => {
    const { read } = await start(true);
    const res = await read('/api/sales?embed=items.customer');
    assert.equal(res.status, 200);
    assert.equal(res.headers['embed-status'], 'items.customer=omitted; reason=rate-limited');
    assert.equal((await read('/api/customers/1')).status, 429);
  });
});
