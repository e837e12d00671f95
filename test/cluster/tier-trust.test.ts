import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mergeConfig } from '../../src/config/load.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { ManualClock } from '../helpers/clock.ts';
import { bearer, get, type HttpAnswer } from '../helpers/gateway.ts';
import type { RunningGateway } from '../helpers/gateway.ts';
import { captureLog, type CapturedLog } from '../helpers/log.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { metric, startSharedWorld, STEADY_REDIS, suiteWorld, until, type SharedWorld } from '../helpers/shared-world.ts';

/** A shared entry as Redis holds it: "<Redis ms when written>\n<meta JSON>\n<body>". */
interface Stored {
  readonly written: string;
  readonly meta: Record<string, unknown>;
  readonly body: string;
}

function split(value: string): Stored {
  const first = value.indexOf('\n');
  const second = value.indexOf('\n', first + 1);
  return { written: value.slice(0, first), meta: JSON.parse(value.slice(first + 1, second)) as Record<string, unknown>, body: value.slice(second + 1) };
}

const join = (s: Stored): string => `${s.written}\n${JSON.stringify(s.meta)}\n${s.body}`;

/** What one world needs to read and write the tier as anyone with access to Redis could. */
function tierOf(redis: () => RedisServer, world: () => SharedWorld) {
  const keyOf = async (path: string): Promise<string> => {
    const prefix = world().prefix;
    const gen = ((await redis().command('GET', `${prefix}gen`)) as string | null) ?? '0';
    return `${prefix}c:${gen}:${path}`;
  };
  return {
    read: async (path: string): Promise<string | null> => (await redis().command('GET', await keyOf(path))) as string | null,
    write: async (path: string, value: string, ttlMs = 600_000): Promise<void> => {
      await redis().command('SET', await keyOf(path), value, 'PX', ttlMs);
    },
  };
}

/** Reads `path` on `gw` and waits until what it fetched is in the tier. */
async function readAndShare(gw: RunningGateway, path: string, auth: Record<string, string>): Promise<HttpAnswer> {
  const before = await metric(gw, 'hypergate_shared_cache_total', { outcome: 'stored' });
  const answer = await get(`${gw.url}${path}`, auth);
  await until(async () => (await metric(gw, 'hypergate_shared_cache_total', { outcome: 'stored' })) > before, `${path} to be shared`);
  return answer;
}

describe('what an instance adopts from the shared tier', { skip: redisSkip }, () => {
  let redis: RedisServer;
  let world: SharedWorld;
  let reader: Record<string, string>;
  let log: CapturedLog;
  // A fetches and shares genuine entries; B reads what was forged from them.
  let a: RunningGateway;
  let b: RunningGateway;
  const tier = tierOf(
    () => redis,
    () => world,
  );

  before(async () => {
    redis = await startRedis();
    world = await startSharedWorld(redis, 1, STEADY_REDIS);
    log = captureLog();
    a = world.gateways[0] as RunningGateway;
    b = await world.add({}, new ManualClock(), log.logger);
    reader = bearer(await world.token({ expiresIn: 3600 }));
  });
  after(async () => {
    await world?.close();
    await redis?.close();
  });

  const rejected = (reason: string): Promise<number> => metric(b, 'hypergate_shared_tier_rejected_total', { reason });
  /** A genuine entry of `from`, shared by A, changed by `edit` and written at `to`'s key. */
  const forge = async (from: string, to: string, edit: (s: Stored) => Stored = (s) => s): Promise<void> => {
    await readAndShare(a, from, reader);
    await tier.write(to, join(edit(split((await tier.read(from)) as string))));
  };
  const customer = (answer: HttpAnswer): { id: number; name: string } => answer.json() as { id: number; name: string };

  it("never serves another record's entry for a path (the entry names the path it was written for)", async () => {
    const before = await rejected('identity');
    await forge('/api/customers/41', '/api/customers/42');
    const res = await get(`${b.url}/api/customers/42`, reader);
    assert.equal(res.status, 200);
    assert.deepEqual(customer(res), {
      id: 42,
      name: 'Customer 42',
      status: 'active',
      links: { self: '/api/customers/42', orders: '/api/customers/42/orders' },
    });
    assert.equal(world.upstream.hits('/customers/42'), 1, 'B asked the upstream itself');
    assert.equal(await rejected('identity'), before + 1);
  });

  it("never serves another record's body under a path it was renamed to (the body's self link must be the path)", async () => {
    await forge('/api/customers/43', '/api/customers/44', (s) => ({ ...s, meta: { ...s.meta, p: '/api/customers/44' } }));
    const res = await get(`${b.url}/api/customers/44`, reader);
    assert.equal(customer(res).id, 44);
  });

  it("caps freshness at the resource's max age: a forged lifetime is dropped, and the copy kept locally never says ttl=315000000", async () => {
    const before = await rejected('freshness');
    await forge('/api/customers/45', '/api/customers/45', (s) => ({ ...s, meta: { ...s.meta, t: 315_000_000_000, c: 'max-age=315000000' } }));
    const first = await get(`${b.url}/api/customers/45`, reader);
    assert.equal(first.status, 200);
    assert.equal(first.headers['cache-control'], 'max-age=60');
    await redis.command('FLUSHALL');
    const again = await get(`${b.url}/api/customers/45`, reader);
    const ttl = Number(/ttl=(-?\d+)/.exec(String(again.headers['cache-status']))?.[1]);
    assert.ok(ttl <= 60, `ttl ${ttl} at most the resource's max age`);
    assert.equal(await rejected('freshness'), before + 1);
  });

  it('drops an entry whose remaining life is longer than its own max-age says', async () => {
    const before = await rejected('freshness');
    await forge('/api/customers/46', '/api/customers/46', (s) => ({ ...s, meta: { ...s.meta, t: 315_000_000_000 } }));
    const res = await get(`${b.url}/api/customers/46`, reader);
    assert.match(String(res.headers['cache-status']), /^hypergate; fwd=miss/);
    assert.equal(await rejected('freshness'), before + 1);
  });

  it('never answers 500 for a header value with CR/LF, and never writes a header the gateway does not write itself', async () => {
    const before = await rejected('header');
    await forge('/api/customers/47', '/api/customers/47', (s) => ({ ...s, meta: { ...s.meta, c: 'max-age=60\r\nX-Injected: yes' } }));
    world.upstream.on('/customers/48', { kind: 'json', body: { id: 48, name: 'Tagged', status: 'active' }, headers: { etag: '"v48"' } });
    await forge('/api/customers/48', '/api/customers/48', (s) => ({ ...s, meta: { ...s.meta, u: '"v48"\r\nX-Injected: yes', e: '"v48"\r\nX-Injected: yes' } }));
    for (const path of ['/api/customers/47', '/api/customers/48']) {
      const res = await get(`${b.url}${path}`, reader);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.equal(res.headers['x-injected'], undefined);
      assert.equal(res.headers['cache-control'], 'max-age=60');
    }
    assert.equal(await rejected('header'), before + 2);
  });

  it('drops and counts what is not an entry at all, or one of another format version, and logs a warning', async () => {
    const format = await rejected('format');
    const version = await rejected('version');
    await tier.write('/api/customers/49', 'not an entry');
    await forge('/api/customers/50', '/api/customers/50', (s) => ({ ...s, meta: { ...s.meta, v: 99 } }));
    await tier.write('/api/customers/51', '1\nnot json\n{}');
    for (const id of [49, 50, 51]) {
      const res = await get(`${b.url}/api/customers/${id}`, reader);
      assert.equal(res.status, 200);
      assert.equal(customer(res).id, id);
    }
    assert.equal(await rejected('format'), format + 2);
    assert.equal(await rejected('version'), version + 1);
    const warnings = log.records().filter((r) => r['level'] === 40 && r['path'] === '/api/customers/49'); // 40: pino's warn
    assert.equal(warnings.length, 1, 'one warning names the path');
    assert.equal(warnings[0]?.['reason'], 'format');
  });

  it('drops a body another format could not be rendered from, so a HAL request never fails on it', async () => {
    const before = await rejected('body');
    await forge('/api/customers/55', '/api/customers/55', (s) => ({ ...s, body: '{"id":55,"links":"none"}' }));
    const res = await get(`${b.url}/api/customers/55`, { ...reader, accept: 'application/hal+json' });
    assert.equal(res.status, 200);
    assert.equal((res.json() as { _links: { self: { href: string } } })._links.self.href, '/api/customers/55');
    assert.equal(await rejected('body'), before + 1);
  });

  it('never lets a forged absence hide an existing item: an absence names its path, and lives no longer than cache.notFoundSeconds', async () => {
    // A genuine absence, shared by A.
    assert.equal((await readAndShare(a, '/api/customers/999999998', reader)).status, 404);
    const absence = split((await tier.read('/api/customers/999999998')) as string);
    await tier.write('/api/customers/52', join(absence));
    await tier.write('/api/customers/53', join({ ...absence, meta: { ...absence.meta, p: '/api/customers/53', t: 3_600_000 } }));
    for (const id of [52, 53]) {
      const res = await get(`${b.url}/api/customers/${id}`, reader);
      assert.equal(res.status, 200, `customer ${id} exists`);
      assert.equal(customer(res).id, id);
    }
  });

  it('still adopts a genuine entry: the tier keeps saving upstream requests', async () => {
    await readAndShare(a, '/api/customers/54', reader);
    const res = await get(`${b.url}/api/customers/54`, reader);
    assert.equal(res.status, 200);
    assert.equal(world.upstream.hits('/customers/54'), 1);
  });
});

describe('entries rendered under another declaration', { skip: redisSkip }, () => {
  const suite = suiteWorld(0, STEADY_REDIS);
  let world: SharedWorld;
  let reader: Record<string, string>;
  before(async () => {
    world = suite.world();
    reader = bearer(await world.token({ expiresIn: 3600 }));
  });

  const exposing = { resources: { customers: { exposeFields: ['email'] } } };
  const hiding = { resources: { customers: { exposeFields: [] } } };
  const body = (answer: HttpAnswer): Record<string, unknown> => answer.json() as Record<string, unknown>;

  it('are never adopted by an instance on the same prefix whose declaration differs, either way', async () => {
    const withEmail = await world.add(exposing);
    const without = await world.add(hiding);
    assert.equal(body(await readAndShare(withEmail, '/api/customers/61', reader))['email'], 'c61@example.com');
    assert.equal('email' in body(await get(`${without.url}/api/customers/61`, reader)), false, 'the email is never served by the instance that hides it');
    assert.equal('email' in body(await readAndShare(without, '/api/customers/62', reader)), false);
    assert.equal(body(await get(`${withEmail.url}/api/customers/62`, reader))['email'], 'c62@example.com');
    assert.equal(world.upstream.hits('/customers/61'), 2);
    assert.equal(await metric(without, 'hypergate_shared_tier_rejected_total', { reason: 'declaration' }), 1);
  });

  it('are never adopted after a reload that changed the declaration', async () => {
    const gw = await world.add(exposing);
    assert.equal(body(await readAndShare(gw, '/api/customers/63', reader))['email'], 'c63@example.com');
    await gw.gateway.reload(configWith(mergeConfig(gw.gateway.config, hiding)));
    const res = await get(`${gw.url}/api/customers/63`, reader);
    assert.equal(res.status, 200);
    assert.equal('email' in body(res), false);
  });

  it('are never adopted when a collection page was rendered under another declaration', async () => {
    const withEmail = await world.add(exposing);
    const without = await world.add(hiding);
    await readAndShare(withEmail, '/api/customers?offset=0&limit=5', reader);
    const page = body(await get(`${without.url}/api/customers?offset=0&limit=5`, reader)) as { items: Record<string, unknown>[] };
    assert.equal(page.items.length, 5);
    assert.ok(page.items.every((item) => !('email' in item)));
  });
});
