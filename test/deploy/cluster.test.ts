import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { freePort, startMain, type MainProcess } from '../helpers/main-process.ts';
import { findNginx, startNginx, type Nginx } from '../helpers/nginx.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { until } from '../helpers/shared-world.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const EXAMPLE = resolve(PROJECT_ROOT, 'deploy/cluster');
const nginx = findNginx();
const skip = nginx === null ? 'nginx is not installed (apt-get install -y nginx; .ci/run does it)' : redisSkip;

describe('the deployment example (deploy/cluster): nginx, three gateways and one Redis', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-cluster-'));
  let key: TestKey;
  let jwks: JwksServer;
  let upstream: TestUpstream;
  let redis: RedisServer;
  let gateways: MainProcess[] = [];
  let admins: string[] = [];
  let proxy: Nginx;
  let front = '';
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 8 });

  before(async () => {
    key = await makeKey('ES256');
    jwks = await startJwksServer([key.publicJwk]);
    upstream = await startTestUpstream();
    // Redis from the example's redis.conf, on a free port.
    redis = await startRedis([], join(EXAMPLE, 'redis.conf'));
    const ports = [await freePort(), await freePort(), await freePort()];
    const adminPorts = [await freePort(), await freePort(), await freePort()];
    // The example's gateway.json as it is; what differs per machine comes from the environment.
    gateways = ports.map((port, i) =>
      startMain(['--config', join(EXAMPLE, 'gateway.json')], {
        HYPERGATE_SERVER_PORT: String(port),
        HYPERGATE_ADMIN_PORT: String(adminPorts[i]),
        HYPERGATE_REDIS_URL: redis.url,
        HYPERGATE_UPSTREAM_URL: upstream.url,
        HYPERGATE_AUTH_JWKS_URL: jwks.url,
        HYPERGATE_LOG_ACCESS: 'false',
      }),
    );
    await Promise.all(gateways.map((g) => g.waitFor((r) => r['event'] === 'listening')));
    admins = adminPorts.map((p) => `http://127.0.0.1:${p}`);
    await until(async () => ((await redis.command('PUBSUB', 'NUMSUB', 'hypergate:invalidate')) as [string, number])[1] === 3, 'three subscribed gateways');
    const proxyPort = await freePort();
    let conf = readFileSync(join(EXAMPLE, 'nginx.conf'), 'utf8').replace('listen 127.0.0.1:8000', `listen 127.0.0.1:${proxyPort}`);
    ports.forEach((port, i) => {
      conf = conf.replace(`127.0.0.1:${8080 + i}`, `127.0.0.1:${port}`);
    });
    assert.ok(ports.every((p) => conf.includes(`127.0.0.1:${p}`)), 'deploy/cluster/nginx.conf has the documented addresses');
    proxy = startNginx(nginx as string, conf, dir);
    front = `http://127.0.0.1:${proxyPort}`;
    await until(async () => (await request(`${front}/api`, { dispatcher: agent })).statusCode === 401, 'nginx to answer');
  });

  after(async () => {
    proxy?.stop();
    for (const g of gateways) g.kill('SIGKILL');
    await Promise.all(gateways.map((g) => g.exited()));
    await agent.close();
    await upstream?.close();
    await jwks?.close();
    await redis?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const readName = async (token: string): Promise<string> => {
    const res = await request(`${front}/api/customers/8`, { headers: bearer(token), dispatcher: agent });
    assert.equal(res.statusCode, 200, proxy.stderr().slice(-300));
    return (JSON.parse(await res.body.text()) as { name: string }).name;
  };

  it('purges through one admin listener and every instance behind nginx answers the new version', async () => {
    const token = await signToken(key);
    // Round robin: every instance reads the customer and keeps it in its own cache.
    for (let n = 0; n < 9; n++) assert.equal(await readName(token), 'Customer 8');
    upstream.on('/customers/8', { kind: 'json', body: { id: 8, name: 'Renamed', status: 'active' } });
    const admin = bearer(await signToken(key, { claims: { sub: 'ops', scope: 'hypergate:admin' } }));
    const purge = await get(`${admins[1]}/cache/customers/8`, admin, 'DELETE');
    assert.deepEqual(purge.json(), { purged: 1, instances: 3 });
    await until(async () => {
      const names = [];
      for (let n = 0; n < 9; n++) names.push(await readName(token));
      return names.every((name) => name === 'Renamed');
    }, 'every instance to answer the new version', 1000);
  });
});
