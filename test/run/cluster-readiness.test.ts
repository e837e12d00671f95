import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { get, problemOf } from '../helpers/gateway.ts';
import { signToken } from '../helpers/keys.ts';
import { startMainWorld, type MainWorld } from '../helpers/main-world.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-cluster-ready-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Polls the primary's /readyz until it answers `status` (bounded). */
async function readyzBecomes(admin: string, status: number, what: string): Promise<void> {
  let last = 0;
  for (let i = 0; i < 150 && last !== status; i++) {
    last = (await get(`${admin}/readyz`)).status;
    if (last !== status) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(last, status, what);
}

describe('a cluster primary answers /readyz for every worker', () => {
  let world: MainWorld;
  before(async () => {
    // One failure opens a worker's breaker, for a few seconds; the service is critical, so that makes the worker not ready.
    world = await startMainWorld(dir, 'breaker', { workers: 2, extra: { upstream: { critical: true, breaker: { failures: 1, cooldownMs: 3000 } } } });
    await readyzBecomes(world.admin, 200, 'the cluster is ready once both workers have their keys');
  });
  after(() => world?.close());

  it('is 503 naming the worker and its open circuit breaker, and 200 again once it closes', async () => {
    world.upstream.on('/customers/500', { kind: 'json', status: 500, body: {} });
    const token = await signToken(world.key);
    // A new connection per request: the primary hands connections to the workers in turn.
    for (let i = 0; i < 4; i++) {
      const res = await request(`${world.base}/api/customers/500`, { headers: { authorization: `Bearer ${token}` }, reset: true });
      await res.body.dump();
      assert.ok(res.statusCode === 502 || res.statusCode === 503, String(res.statusCode));
    }
    const res = await get(`${world.admin}/readyz`);
    assert.equal(res.status, 503);
    assert.equal(problemOf(res).code, 'HG_ERR_NOT_READY');
    assert.match(problemOf(res).detail, /worker \d+ \(pid \d+\): upstream: the circuit breaker is open/);
    await readyzBecomes(world.admin, 200, 'ready again once the cooldown is over (the breaker is half-open)');
  });

  it('is 503 naming a frozen worker that does not answer in time, and 200 once it runs again', async () => {
    const frozen = world.servingPids()[0] as number;
    process.kill(frozen, 'SIGSTOP');
    try {
      const res = await get(`${world.admin}/readyz`);
      assert.equal(res.status, 503);
      assert.match(problemOf(res).detail, new RegExp(`worker \\d+ \\(pid ${frozen}\\): no answer within \\d+ ms`));
    } finally {
      process.kill(frozen, 'SIGCONT');
    }
    await readyzBecomes(world.admin, 200, 'ready once the worker answers again');
  });
});

describe('a cluster primary whose workers cannot load their keys', () => {
  let jwksHost: TestUpstream;
  let world: MainWorld;
  before(async () => {
    // The key server answers 503 until the test lets it serve the keys.
    jwksHost = await startTestUpstream();
    jwksHost.on('/jwks', { kind: 'json', status: 503, body: {} });
    world = await startMainWorld(dir, 'keys', { workers: 2, extra: { auth: { jwksUrl: `${jwksHost.url}/jwks`, jwksCooldownMs: 0 } } });
  });
  after(async () => {
    await world?.close();
    await jwksHost?.close();
  });

  it('is 503 naming the workers without keys, and 200 once the key server answers', async () => {
    const res = await get(`${world.admin}/readyz`);
    assert.equal(res.status, 503);
    assert.match(problemOf(res).detail, /worker \d+ \(pid \d+\): the signing keys are not loaded/);
    jwksHost.on('/jwks', { kind: 'json', body: { keys: [world.key.publicJwk] } });
    await readyzBecomes(world.admin, 200, 'ready once every worker has fetched the keys');
  });
});
