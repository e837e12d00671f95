import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearer, get, send, type HttpAnswer } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { redisSkip, type RedisServer } from '../helpers/redis.ts';
import { suiteWorld, until, type SharedWorld } from '../helpers/shared-world.ts';

const apiKey = (key: string): Record<string, string> => ({ authorization: `ApiKey ${key}` });
const json = { 'content-type': 'application/json' };

interface Issued {
  readonly id: string;
  readonly key: string;
  readonly consumer: string;
}

/** Keys made through the admin API of one instance, used on three sharing one real redis-server. */
describe('API keys in Redis across three instances (auth.apiKeys.redis)', { skip: redisSkip }, () => {
  const shared = suiteWorld(3, { auth: { apiKeys: { redis: true } }, admin: { port: 0, host: '127.0.0.1' } });
  const world = (): SharedWorld => shared.world();
  const redis = (): RedisServer => shared.redis();

  const admin = async (i: number, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<HttpAnswer> => {
    const gw = world().gateways[i];
    assert.ok(gw?.adminUrl);
    const token = await world().token({ claims: { sub: 'ops', scope: 'hypergate:admin' } });
    if (method === 'GET') return get(`${gw.adminUrl}${path}`, bearer(token));
    return send(`${gw.adminUrl}${path}`, method, { ...bearer(token), ...json }, body === undefined ? undefined : JSON.stringify(body));
  };
  const create = async (consumer: string, plan: string | null = null): Promise<Issued> => {
    const res = await admin(0, 'POST', '/api-keys', { consumer, scopes: ['customers:read'], claims: { tier: 'partner' }, plan });
    assert.equal(res.status, 201, res.text);
    return res.json() as Issued;
  };
  const read = (i: number, key: string, id = 21): Promise<HttpAnswer> => get(`${world().gateways[i]?.url}/api/customers/${id}`, apiKey(key));
  /** The Redis key of a record by its id (its hash, from the index). */
  const oldRecordKey = async (id: string): Promise<string> => {
    const indexed = (await redis().command('HGET', `${world().prefix}api-keys`, id)) as string | null;
    const hash = indexed === null ? 'gone' : (JSON.parse(indexed) as { hash: string }).hash;
    return `${world().prefix}api-key:${hash}`;
  };
  const statuses = async (key: string): Promise<number[]> => Promise.all([0, 1, 2].map(async (i) => (await read(i, key)).status));

  it('a key made on one instance works on all three; its secret is in the creation answer only', async () => {
    const made = await create('partner-a', 'gold');
    assert.match(made.key, /^hg_[0-9A-Za-z]{38}$/);
    assert.equal(made.consumer, 'partner-a');
    assert.deepEqual(await statuses(made.key), [200, 200, 200]);
    const list = await admin(2, 'GET', '/api-keys');
    assert.equal(list.status, 200);
    assert.ok(!list.text.includes(made.key), 'never the key');
    const listed = (list.json() as { apiKeys: Record<string, unknown>[] }).apiKeys.find((k) => k['id'] === made.id);
    assert.deepEqual(listed && Object.keys(listed).sort(), ['claims', 'consumer', 'createdAt', 'expiresAt', 'id', 'plan', 'scopes']);
    assert.equal(listed?.['plan'], 'gold');
    const stored = JSON.stringify(await redis().command('KEYS', `${world().prefix}api-key*`));
    assert.ok(!stored.includes(made.key), 'Redis holds hashes, never a key');
  });

  it('the admin endpoints need the admin scope', async () => {
    const gw = world().gateways[0];
    assert.ok(gw?.adminUrl);
    const none = await get(`${gw.adminUrl}/api-keys`);
    assert.equal(none.status, 401);
    const reader = await world().token({ claims: { sub: 'someone', scope: 'customers:read' } });
    const forbidden = await send(`${gw.adminUrl}/api-keys`, 'POST', { ...bearer(reader), ...json }, JSON.stringify({ consumer: 'x' }));
    assertProblem(forbidden, { status: 403, code: 'HG_ERR_AUTH_INSUFFICIENT_SCOPE' });
    const bad = await admin(0, 'POST', '/api-keys', { consumer: 'has spaces' });
    assert.equal(bad.status, 422);
  });

  it('a revocation on one instance is seen by all three within 1 s', async () => {
    const made = await create('partner-b');
    assert.deepEqual(await statuses(made.key), [200, 200, 200], 'each instance knows the key');
    const revoked = await admin(1, 'DELETE', `/api-keys/${made.id}`);
    assert.equal(revoked.status, 204);
    const start = Date.now();
    await until(async () => (await statuses(made.key)).every((s) => s === 401), 'every instance to refuse the revoked key', 3000);
    assert.ok(Date.now() - start < 1000, `seen everywhere in ${Date.now() - start} ms`);
    assert.equal((await admin(1, 'DELETE', `/api-keys/${made.id}`)).status, 404);
    const list = (await admin(0, 'GET', '/api-keys')).json() as { apiKeys: { id: string }[] };
    assert.ok(!list.apiKeys.some((k) => k.id === made.id));
  });

  it('a revocation whose message an instance missed is seen there once its answer is 1 s old', async () => {
    const made = await create('partner-c');
    assert.deepEqual(await statuses(made.key), [200, 200, 200]);
    // As if the message were lost: the record goes from Redis without one.
    const keys = (await redis().command('KEYS', `${world().prefix}api-key:*`)) as string[];
    for (const key of keys) {
      const record = (await redis().command('GET', key)) as string;
      if ((JSON.parse(record) as { id: string }).id === made.id) await redis().command('DEL', key);
    }
    assert.equal((await read(2, made.key)).status, 200, 'still the answer of less than 1 s ago');
    world().clocks[2]?.advance(1000);
    assert.equal((await read(2, made.key)).status, 401);
  });

  it('a rotation gives a new key; the old one works for the overlap, then nowhere', async () => {
    const old = await create('partner-d');
    assert.deepEqual(await statuses(old.key), [200, 200, 200]);
    const rotated = await admin(2, 'POST', `/api-keys/${old.id}/rotate`, { overlapSeconds: 1 });
    assert.equal(rotated.status, 201, rotated.text);
    const next = rotated.json() as Issued & { replaces: string };
    assert.equal(next.replaces, old.id);
    assert.notEqual(next.key, old.key);
    assert.deepEqual(await statuses(next.key), [200, 200, 200]);
    assert.deepEqual(await statuses(old.key), [200, 200, 200], 'within the overlap');
    // Past the overlap on every clock, and in Redis (its record expires with the overlap).
    await until(async () => (await redis().command('PTTL', await oldRecordKey(old.id))) === -2, 'the old record to expire in Redis');
    for (const clock of world().clocks) clock.advance(2000);
    assert.deepEqual(await statuses(old.key), [401, 401, 401]);
    assert.deepEqual(await statuses(next.key), [200, 200, 200]);
  });

  it('with Redis stopped, keys already known keep working; a key not seen here waits (503, not 401)', async () => {
    const known = await create('partner-e');
    const unseen = await create('partner-f');
    assert.equal((await read(1, known.key)).status, 200);
    redis().pause();
    try {
      world().clocks[1]?.advance(5000);
      for (let i = 0; i < 3; i++) assert.equal((await read(1, known.key)).status, 200, 'the last answer stands while Redis cannot give one');
      const waiting = await read(1, unseen.key);
      assertProblem(waiting, { status: 503, code: 'HG_ERR_AUTH_KEYS_UNAVAILABLE' });
      assert.equal(waiting.headers['retry-after'], '1');
    } finally {
      redis().resume();
    }
    await until(async () => (await read(1, unseen.key)).status === 200, 'the unseen key once Redis answers again');
  });
});
