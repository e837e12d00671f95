import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { get, problemOf } from '../helpers/gateway.ts';
import { makeKey, signToken, type TestKey } from '../helpers/keys.ts';
import { freePort, startMain, type MainProcess } from '../helpers/main-process.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-cluster-ready-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A real cluster (server.workers: 2) whose keys come from `jwksHost` (a test upstream at /jwks). */
interface Cluster {
  readonly main: MainProcess;
  readonly base: string;
  readonly admin: string;
  readonly workerPids: number[];
  close(): Promise<void>;
}

async function startCluster(name: string, upstream: TestUpstream, jwksHost: TestUpstream, extra: Record<string, unknown>): Promise<Cluster> {
  const port = await freePort();
  const adminPort = await freePort();
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      ...extra,
      server: { port, workers: 2, drainTimeoutMs: 1000 },
      admin: { port: adminPort },
      upstream: { url: upstream.url, ...(extra['upstream'] as object) },
      auth: { jwksUrl: `${jwksHost.url}/jwks`, jwksCooldownMs: 0 },
      log: { access: false },
    }),
  );
  const main = startMain(['--config', file]);
  await main.waitFor((r) => r['event'] === 'admin-listening');
  for (let n = 1; n <= 2; n++) await main.waitFor((r) => r['event'] === 'listening' && r['worker'] === n);
  return {
    main,
    base: `http://127.0.0.1:${port}`,
    admin: `http://127.0.0.1:${adminPort}`,
    workerPids: main.records.filter((r) => r['event'] === 'listening').map((r) => r['pid'] as number),
    close: async () => {
      main.kill('SIGKILL');
      await main.exited();
      for (const pid of main.records.filter((r) => r['event'] === 'listening').map((r) => r['pid'] as number)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone with its primary
        }
      }
    },
  };
}

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
  let key: TestKey;
  let upstream: TestUpstream;
  let jwksHost: TestUpstream;
  let cluster: Cluster;
  let token = '';

  before(async () => {
    key = await makeKey('ES256');
    upstream = await startTestUpstream();
    jwksHost = await startTestUpstream();
    jwksHost.on('/jwks', { kind: 'json', body: { keys: [key.publicJwk] } });
    // One failure opens a worker's breaker, for a few seconds.
    cluster = await startCluster('breaker', upstream, jwksHost, { upstream: { breaker: { failures: 1, cooldownMs: 3000 } } });
    token = await signToken(key);
    await readyzBecomes(cluster.admin, 200, 'the cluster is ready once both workers have their keys');
  });
  after(async () => {
    await cluster?.close();
    await upstream?.close();
    await jwksHost?.close();
  });

  it('is 503 naming the worker and its open circuit breaker, and 200 again once it closes', async () => {
    upstream.on('/customers/500', { kind: 'json', status: 500, body: {} });
    // A new connection per request: the primary hands connections to the workers in turn.
    for (let i = 0; i < 4; i++) {
      const res = await request(`${cluster.base}/api/customers/500`, { headers: { authorization: `Bearer ${token}` }, reset: true });
      await res.body.dump();
      assert.ok(res.statusCode === 502 || res.statusCode === 503, String(res.statusCode));
    }
    const res = await get(`${cluster.admin}/readyz`);
    assert.equal(res.status, 503);
    assert.equal(problemOf(res).code, 'HG_ERR_NOT_READY');
    assert.match(problemOf(res).detail, /worker \d+ \(pid \d+\): upstream: the circuit breaker is open/);
    await readyzBecomes(cluster.admin, 200, 'ready again once the cooldown is over (the breaker is half-open)');
  });

  it('is 503 naming a frozen worker that does not answer in time, and 200 once it runs again', async () => {
    const frozen = cluster.workerPids[0] as number;
    process.kill(frozen, 'SIGSTOP');
    try {
      const res = await get(`${cluster.admin}/readyz`);
      assert.equal(res.status, 503);
      assert.match(problemOf(res).detail, new RegExp(`worker \\d+ \\(pid ${frozen}\\): no answer within \\d+ ms`));
    } finally {
      process.kill(frozen, 'SIGCONT');
    }
    await readyzBecomes(cluster.admin, 200, 'ready once the worker answers again');
  });
});

describe('a cluster primary whose workers cannot load their keys', () => {
  let key: TestKey;
  let upstream: TestUpstream;
  let jwksHost: TestUpstream;
  let cluster: Cluster;

  before(async () => {
    key = await makeKey('ES256');
    upstream = await startTestUpstream();
    jwksHost = await startTestUpstream();
    jwksHost.on('/jwks', { kind: 'json', status: 503, body: {} });
    cluster = await startCluster('keys', upstream, jwksHost, {});
  });
  after(async () => {
    await cluster?.close();
    await upstream?.close();
    await jwksHost?.close();
  });

  it('is 503 naming the workers without keys, and 200 once the key server answers', async () => {
    const res = await get(`${cluster.admin}/readyz`);
    assert.equal(res.status, 503);
    assert.match(problemOf(res).detail, /worker \d+ \(pid \d+\): the signing keys are not loaded/);
    jwksHost.on('/jwks', { kind: 'json', body: { keys: [key.publicJwk] } });
    await readyzBecomes(cluster.admin, 200, 'ready once every worker has fetched the keys');
  });
});
