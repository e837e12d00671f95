import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { bearer, get, send } from '../helpers/gateway.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { sample } from '../helpers/metrics.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { until } from '../helpers/shared-world.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';
import { gate } from '../helpers/wait.ts';

interface Instance {
  readonly main: MainProcess;
  readonly url: string;
  readonly admin: string;
}

const BURST = 50;

describe('three gateway processes sharing one Redis behave as one gateway', { skip: redisSkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-shared-'));
  let redis: RedisServer;
  let key: TestKey;
  let jwks: JwksServer;
  let upstream: TestUpstream;
  let instances: Instance[] = [];
  let reader: Record<string, string>;
  let writerToken = '';
  const writer = (): Record<string, string> => bearer(writerToken);
  const agent = new Agent({ connections: 32 });

  const metricsOf = async (i: Instance): Promise<string> => (await get(`${i.admin}/metrics`)).text;
  const read = async (i: Instance, path: string, headers = reader): Promise<{ status: number; body: string; etag: string }> => {
    const res = await request(`${i.url}${path}`, { headers, dispatcher: agent });
    return { status: res.statusCode, body: await res.body.text(), etag: String(res.headers.etag) };
  };

  before(async () => {
    redis = await startRedis();
    key = await makeKey('ES256');
    jwks = await startJwksServer([key.publicJwk]);
    upstream = await startTestUpstream();
    const file = join(dir, 'gateway.json');
    // A generous Redis deadline: these tests are about sharing, on a machine busy with other tests (the faults are tested apart).
    // The rate limit binds only the rate-limit test's subject: the reader stays far below a burst.
    const config = {
      upstream: { url: upstream.url },
      auth: { jwksUrl: jwks.url },
      redis: { url: redis.url, timeoutMs: 250 },
      rateLimit: { requestsPerSecond: 1, burst: BURST },
      log: { access: false },
    };
    writeFileSync(file, JSON.stringify(config));
    const mains = [0, 1, 2].map(() => startMain(['--config', file], { HYPERGATE_SERVER_PORT: '0', HYPERGATE_ADMIN_PORT: '0' }));
    instances = await Promise.all(
      mains.map(async (main) => {
        const listening = await main.waitFor((r) => r['event'] === 'listening');
        const admin = await main.waitFor((r) => r['event'] === 'admin-listening');
        return { main, url: `http://127.0.0.1:${String(listening['port'])}`, admin: `http://127.0.0.1:${String(admin['port'])}` };
      }),
    );
    await until(async () => ((await redis.command('PUBSUB', 'NUMSUB', 'hypergate:invalidate')) as [string, number])[1] === 3, 'three subscribed instances');
    reader = bearer(await signToken(key, { claims: { sub: 'reader' }, expiresIn: 600 }));
    writerToken = await signToken(key, { claims: { sub: 'writer', scope: 'customers:read customers:write' }, expiresIn: 600 });
  });

  after(async () => {
    for (const i of instances) i.main.kill('SIGKILL');
    await Promise.all(instances.map((i) => i.main.exited()));
    await agent.close();
    await upstream?.close();
    await jwks?.close();
    await redis?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a miss on one instance from the fetch another made, with the same bytes and ETag', async () => {
    const [a, b] = instances as [Instance, Instance];
    const first = await read(a, '/api/customers/21');
    // A shares what it fetched in the background, after the fetch: once it is in Redis, B finds it.
    await until(async () => (sample(await metricsOf(a), 'hypergate_shared_cache_total', { outcome: 'stored' }) ?? 0) >= 1, 'the entry to be shared');
    const second = await read(b, '/api/customers/21');
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.equal(second.body, first.body);
    assert.equal(second.etag, first.etag);
    assert.equal(upstream.hits('/customers/21'), 1, 'one upstream request for two instances');
    assert.equal(sample(await metricsOf(b), 'hypergate_shared_cache_total', { outcome: 'hit' }), 1);
  });

  it('makes one upstream request for a herd over three instances', async () => {
    const held = gate();
    upstream.on('/customers/77', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 77, name: 'Herd', status: 'active' } } });
    const answers = Promise.all(instances.flatMap((i) => [read(i, '/api/customers/77'), read(i, '/api/customers/77')]));
    // Each instance has asked Redis and found nothing (one took the lock, the others wait for its entry).
    for (const i of instances)
      await until(async () => (sample(await metricsOf(i), 'hypergate_shared_cache_total', { outcome: 'miss' }) ?? 0) >= 1, 'every instance to miss');
    await until(async () => upstream.active() === 1, 'the one upstream request');
    held.open();
    for (const answer of await answers) assert.equal(answer.status, 200);
    assert.equal(upstream.hits('/customers/77'), 1);
  });

  it("drops a purged entry on every instance: a purge on one admin listener reaches the others' caches", async () => {
    for (const i of instances) assert.equal((await read(i, '/api/customers/33')).status, 200);
    assert.equal(upstream.hits('/customers/33'), 1);
    upstream.on('/customers/33', { kind: 'json', body: { id: 33, name: 'Renamed', status: 'active' } });
    const admin = bearer(await signToken(key, { claims: { sub: 'ops', scope: 'hypergate:admin' } }));
    const purge = await get(`${instances[0]?.admin}/cache/customers/33`, admin, 'DELETE');
    assert.equal(purge.status, 200);
    assert.deepEqual(purge.json(), { purged: 1, instances: 3 });
    for (const i of instances.slice(1)) {
      await until(
        async () => (JSON.parse((await read(i, '/api/customers/33')).body) as { name: string }).name === 'Renamed',
        'the other instance to drop it',
        1000,
      );
    }
  });

  it('drops a changed item on every instance: a PATCH through one, and the others read the new version within a second', async () => {
    for (const i of instances) assert.equal((JSON.parse((await read(i, '/api/customers/34')).body) as { name: string }).name, 'Customer 34');
    const renamed = { id: 34, name: 'Patched', status: 'active' };
    upstream.on('PATCH /customers/34', { kind: 'json', body: renamed, headers: { etag: '"v2"' } });
    upstream.on('GET /customers/34', { kind: 'json', body: renamed, headers: { etag: '"v2"' } });
    const patched = await send(
      `${instances[0]?.url}/api/customers/34`,
      'PATCH',
      { ...writer(), 'content-type': 'application/merge-patch+json', 'if-match': '*' },
      '{"name":"Patched"}',
    );
    assert.equal(patched.status, 200);
    for (const i of instances.slice(1)) {
      await until(
        async () => (JSON.parse((await read(i, '/api/customers/34')).body) as { name: string }).name === 'Patched',
        'the other instance to drop it',
        1000,
      );
    }
  });

  it('replays an Idempotency-Key on another process, and answers 409 there while the first still runs', async () => {
    const held = gate();
    upstream.on('POST /customers', {
      kind: 'wait',
      until: held.promise,
      then: { kind: 'json', status: 201, body: { id: 950, name: 'Once', status: 'active' } },
    });
    const headers = { ...writer(), 'content-type': 'application/json', 'idempotency-key': '"processes-950"' };
    const body = '{"name":"Once","status":"active"}';
    const first = send(`${instances[0]?.url}/api/customers`, 'POST', headers, body);
    await until(async () => upstream.active() === 1, 'the POST to reach the upstream');
    const running = await send(`${instances[1]?.url}/api/customers`, 'POST', headers, body);
    assert.equal(running.status, 409);
    held.open();
    const created = await first;
    assert.equal(created.status, 201);
    const replayed = await send(`${instances[2]?.url}/api/customers`, 'POST', headers, body);
    assert.equal(replayed.status, 201);
    assert.equal(replayed.text, created.text);
    assert.equal(replayed.headers['location'], '/api/customers/950');
    assert.equal(upstream.requests.filter((r) => r.method === 'POST').length, 1, 'one POST reached the upstream for three instances');
  });

  it('holds one rate limit across the instances: the total allowed stays within one burst of the limit', async () => {
    const limited = bearer(await signToken(key, { claims: { sub: 'hammer' }, expiresIn: 600 }));
    const started = Date.now();
    const statuses: number[] = [];
    for (let n = 0; n < 3 * BURST; n++) statuses.push((await read(instances[n % 3] as Instance, '/api/customers/1', limited)).status);
    const seconds = (Date.now() - started) / 1000;
    const ok = statuses.filter((s) => s === 200).length;
    assert.ok(
      statuses.every((s) => s === 200 || s === 429),
      String(statuses),
    );
    // Per instance, each would have let a whole burst through (3 × 50); as one, 50 plus what refilled meanwhile.
    assert.ok(ok >= BURST && ok <= BURST + Math.ceil(seconds) + 1, `${ok} allowed in ${seconds} s`);
  });
});
