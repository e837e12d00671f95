import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startClusterExample, type ClusterExample } from '../helpers/cluster-example.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { signToken } from '../helpers/keys.ts';
import { findNginx } from '../helpers/nginx.ts';
import { redisSkip } from '../helpers/redis.ts';
import { until } from '../helpers/shared-world.ts';

const nginx = findNginx();
const skip = nginx === null ? 'nginx is not installed (apt-get install -y nginx; .ci/run does it)' : redisSkip;

describe('the deployment example (deploy/cluster): nginx, three gateways and one Redis', { skip }, () => {
  let cluster: ClusterExample;

  before(async () => {
    cluster = await startClusterExample(nginx as string);
  });

  after(() => cluster?.close());

  const readName = async (token: string): Promise<string> => {
    const res = await request(`${cluster.front}/api/customers/8`, { headers: bearer(token), dispatcher: cluster.agent });
    assert.equal(res.statusCode, 200, cluster.nginx.stderr().slice(-300));
    return (JSON.parse(await res.body.text()) as { name: string }).name;
  };

  it('purges through one admin listener and every instance behind nginx answers the new version', async () => {
    const token = await signToken(cluster.key);
    // Round robin: every instance reads the customer and keeps it in its own cache.
    for (let n = 0; n < 9; n++) assert.equal(await readName(token), 'Customer 8');
    cluster.upstream.on('/customers/8', { kind: 'json', body: { id: 8, name: 'Renamed', status: 'active' } });
    const admin = bearer(await signToken(cluster.key, { claims: { sub: 'ops', scope: 'hypergate:admin' } }));
    const purge = await get(`${cluster.admins[1]}/cache/customers/8`, admin, 'DELETE');
    assert.deepEqual(purge.json(), { purged: 1, instances: 3 });
    await until(
      async () => {
        const names = [];
        for (let n = 0; n < 9; n++) names.push(await readName(token));
        return names.every((name) => name === 'Renamed');
      },
      'every instance to answer the new version',
      1000,
    );
  });
});
