import assert from 'node:assert/strict';
import { get, send } from './gateway.ts';
import { metric, until, type SharedWorld } from './shared-world.ts';

/**
 * A steady trickle of reads over a world's first two instances, every 20 ms, every other one a
 * miss (so the shared tier and its lock are asked, not only the rate limit). `stop` ends it a
 * moment later, checks that it was a trickle and that every request succeeded, and returns how
 * many there were.
 */
export function trickle(world: SharedWorld, reader: Record<string, string>): { stop(): Promise<number> } {
  let stopped = false;
  const statuses: number[] = [];
  const running = (async () => {
    for (let n = 0; !stopped; n++) {
      statuses.push((await get(`${world.gateways[n % 2]?.url as string}/api/customers/${n % 2 === 0 ? 1 : 100 + n}`, reader)).status);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    stop: async () => {
      await new Promise((r) => setTimeout(r, 300));
      stopped = true;
      await running;
      assert.ok(statuses.length > 10, `a trickle, not a few requests (${statuses.length})`);
      assert.deepEqual(
        statuses.filter((s) => s !== 200),
        [],
        'every request succeeded',
      );
      return statuses.length;
    },
  };
}

/**
 * After a failover: the cluster rate limit is decided in Redis, what one instance fetched the other
 * reads from the shared tier (`shared` says whether the new master holds a path's entry), a write
 * on one instance drops the entry from the other, and an Idempotency-Key's answer is replayed by
 * the other instance.
 */
export async function assertSharedStateWorks(
  world: SharedWorld,
  reader: Record<string, string>,
  writer: Record<string, string>,
  shared: (path: string) => Promise<boolean>,
): Promise<void> {
  const urlOf = (i: number, path: string): string => `${world.gateways[i]?.url as string}${path}`;
  const cached = (i: number, path: string): boolean => world.gateways[i]?.gateway.cache.get(path) !== undefined;
  const rateCalls = (): Promise<number> => metric(world.gateways[1]!, 'hypergate_redis_calls_total', { op: 'rate', outcome: 'ok' });

  const rate = await rateCalls();
  assert.equal((await get(urlOf(1, '/api/customers/7'), reader)).status, 200);
  assert.equal(await rateCalls(), rate + 1, 'the rate limit decided in Redis');

  world.upstream.reset();
  assert.equal((await get(urlOf(0, '/api/customers/21'), reader)).status, 200);
  await until(() => shared('/api/customers/21'), 'the entry to be shared');
  assert.equal((await get(urlOf(1, '/api/customers/21'), reader)).status, 200);
  assert.equal(world.upstream.hits('/customers/21'), 1, 'the second instance read it from the new master');

  assert.ok(cached(1, '/api/customers/21'));
  world.upstream.on('PATCH /customers/21', { kind: 'json', body: { id: 21, name: 'Renamed', status: 'active' }, headers: { etag: '"v2"' } });
  const patch = { ...writer, 'content-type': 'application/merge-patch+json', 'if-match': '*' };
  assert.equal((await send(urlOf(0, '/api/customers/21'), 'PATCH', patch, '{"name":"Renamed"}')).status, 200);
  await until(async () => !cached(1, '/api/customers/21'), 'the other instance to drop the entry', 2000);

  world.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 901, name: 'Once', status: 'active' } });
  const headers = { ...writer, 'content-type': 'application/json', 'idempotency-key': '"after-failover"' };
  const first = await send(urlOf(0, '/api/customers'), 'POST', headers, '{"name":"Once","status":"active"}');
  const again = await send(urlOf(1, '/api/customers'), 'POST', headers, '{"name":"Once","status":"active"}');
  assert.equal(first.status, 201);
  assert.equal(again.status, 201);
  assert.equal(again.text, first.text);
  assert.equal(world.upstream.requests.filter((r) => r.method === 'POST').length, 1, 'replayed, not sent again');
}
