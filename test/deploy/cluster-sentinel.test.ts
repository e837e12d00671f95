import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startClusterExample, type ClusterExample } from '../helpers/cluster-example.ts';
import { bearer } from '../helpers/gateway.ts';
import { signToken } from '../helpers/keys.ts';
import { findNginx } from '../helpers/nginx.ts';
import { ask, sentinelSkip } from '../helpers/redis-sentinel.ts';
import { redisSkip } from '../helpers/redis.ts';
import { until } from '../helpers/shared-world.ts';

const nginx = findNginx();
const skip = nginx === null ? 'nginx is not installed (apt-get install -y nginx; .ci/run does it)' : redisSkip || sentinelSkip;

describe('the deployment example with Redis behind Sentinel (deploy/cluster, CLUSTER_REDIS=sentinel)', { skip }, () => {
  let cluster: ClusterExample;

  before(async () => {
    cluster = await startClusterExample(nginx as string, {}, true);
  });

  after(() => cluster?.close());

  it('fails Redis over under a trickle of requests through nginx, and none of them fails', async () => {
    const token = await signToken(cluster.key);
    let stop = false;
    const statuses: number[] = [];
    const trickle = (async () => {
      for (let n = 0; !stop; n++) {
        const res = await request(`${cluster.front}/api/customers/${n % 2 === 0 ? 1 : 100 + n}`, { headers: bearer(token), dispatcher: cluster.agent });
        await res.body.dump();
        statuses.push(res.statusCode);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const sentinel = cluster.sentinelPorts[0] as number;
    await until(async () => ((await ask(sentinel, 'SENTINEL', 'replicas', 'hypergate')) as unknown[]).length === 1, 'the Sentinels to know the replica');
    await ask(sentinel, 'SENTINEL', 'FAILOVER', 'hypergate');
    const replica = cluster.replicas[0]!;
    await until(
      async () => ((await replica.command('PUBSUB', 'NUMSUB', 'hypergate:invalidate')) as [string, number])[1] === 3,
      'the three gateways to subscribe on the new master',
      30_000,
    );
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await trickle;
    assert.ok(statuses.length > 10, `a trickle, not a few requests (${statuses.length})`);
    assert.deepEqual(
      statuses.filter((s) => s !== 200),
      [],
    );
    assert.match(String(await replica.command('INFO', 'replication')), /role:master/);
  });
});
