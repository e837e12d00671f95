import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { embedOverrides, serveSales } from '../helpers/embed-world.ts';
import { bearer, get, send } from '../helpers/gateway.ts';
import { redisSkip } from '../helpers/redis.ts';
import { suiteWorld, until, type SharedWorld } from '../helpers/shared-world.ts';

type Json = Record<string, unknown>;

/** Composites are assembled from cached parts per request: a write through one instance reaches every instance's next composite. */
describe('embedding across instances (Redis)', { skip: redisSkip }, () => {
  const suite = suiteWorld(2, embedOverrides());
  let world: SharedWorld;
  let reader: Record<string, string>;
  let writer: Record<string, string>;

  before(async () => {
    world = suite.world();
    reader = bearer(await world.token({ claims: { scope: 'customers:read customers:read:any' }, expiresIn: 3600 }));
    writer = bearer(await world.token({ claims: { scope: 'customers:read customers:read:any customers:write' }, expiresIn: 3600 }));
    serveSales(world.upstream);
  });

  const urlOf = (i: number, path: string): string => `${world.gateways[i]?.url as string}${path}`;

  it('a write to one part through one instance makes the other answer 200 with a new ETag to the old one', async () => {
    world.upstream.on('GET /customers/2', { kind: 'json', body: { id: 2, name: 'Before', status: 'active' } });
    const first = await get(urlOf(1, '/api/sales?embed=items.customer'), reader);
    assert.equal(first.status, 200);
    const etag = first.headers['etag'] as string;
    assert.equal((await get(urlOf(1, '/api/sales?embed=items.customer'), { ...reader, 'if-none-match': etag })).status, 304);

    world.upstream.on('PATCH /customers/2', { kind: 'json', body: { id: 2, name: 'After', status: 'active' } });
    world.upstream.on('GET /customers/2', { kind: 'json', body: { id: 2, name: 'After', status: 'active' } });
    const write = await send(
      urlOf(0, '/api/customers/2'),
      'PATCH',
      { ...writer, 'content-type': 'application/merge-patch+json', 'if-match': '*' },
      '{"name":"After"}',
    );
    assert.equal(write.status, 200);

    // The write is answered once every instance has dropped the entry (write-acknowledged); polled in case the bus is slower.
    await until(
      async () => (await get(urlOf(1, '/api/sales?embed=items.customer'), { ...reader, 'if-none-match': etag })).status === 200,
      'the second instance to see the write',
    );
    const after = await get(urlOf(1, '/api/sales?embed=items.customer'), reader);
    assert.notEqual(after.headers['etag'], etag);
    assert.equal((((after.json() as { items: Json[] }).items[1]?.['embedded'] as Json)['customer'] as Json)['name'], 'After');
  });
});
