import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startClusterExample, type ClusterExample } from '../helpers/cluster-example.ts';
import { bearer } from '../helpers/gateway.ts';
import { signToken } from '../helpers/keys.ts';
import { findNginx } from '../helpers/nginx.ts';
import { redisSkip } from '../helpers/redis.ts';
import { until } from '../helpers/shared-world.ts';
import { gate } from '../helpers/wait.ts';

const nginx = findNginx();
const skip = nginx === null ? 'nginx is not installed (apt-get install -y nginx; .ci/run does it)' : redisSkip;

/** The gateways give up on the stalled service after this long (upstream.timeoutMs) and answer 504. */
const GATEWAY_UPSTREAM_TIMEOUT = { HYPERGATE_UPSTREAM_TIMEOUT_MS: '300' };

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly body: string;
}

async function call(cluster: ClusterExample, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const res = await request(`${cluster.front}${path}`, {
    method: method as 'GET',
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: cluster.agent,
  });
  return { status: res.statusCode, type: String(res.headers['content-type']), body: await res.body.text() };
}

/** The answer is the gateway's own problem with this code, not an error page of nginx's. */
function assertGatewayProblem(cluster: ClusterExample, res: Answer, status: number, code: string): void {
  const why = `${res.status} ${res.body} (nginx: ${cluster.nginx.stderr().slice(-300)})`;
  assert.equal(res.status, status, why);
  assert.equal(res.type, 'application/problem+json', why);
  assert.equal((JSON.parse(res.body) as { code: string }).code, code, why);
}

/** How many requests with this method and path the shared customer service received. */
function received(cluster: ClusterExample, method: string, path: string): number {
  return cluster.upstream.requests.filter((r) => r.method === method && r.path === path).length;
}

/** Which of `pids` holds the loopback TCP connection whose local port is `port` (Linux: /proc/net/tcp, then each process's descriptors). */
function ownerOfConnection(port: number, pids: readonly number[]): number | undefined {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols[1]?.endsWith(hexPort) === true && cols[9] !== undefined) inodes.add(`socket:[${cols[9]}]`);
  }
  return pids.find((pid) =>
    readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false; // closed meanwhile
      }
    }),
  );
}

describe('the deployment example while the customer service stalls', { skip }, () => {
  let cluster: ClusterExample;
  let token = '';

  before(async () => {
    cluster = await startClusterExample(nginx as string, GATEWAY_UPSTREAM_TIMEOUT);
    token = await signToken(cluster.key, { claims: { scope: 'customers:read customers:write customers:read:any' } });
    // Customer 5 is cached on every instance.
    for (const base of cluster.direct) {
      const res = await request(`${base}/api/customers/5`, { headers: bearer(token), dispatcher: cluster.agent });
      await res.body.dump();
      assert.equal(res.statusCode, 200);
    }
    cluster.upstream.on('*', { kind: 'hang' });
  });

  after(() => cluster?.close());

  it('sends each PUT, DELETE and POST to the service once, and passes the gateway answer on', async () => {
    // If-Match: * goes to the service as it is (any other tag is checked against a read first).
    const writes: { method: string; path: string; headers: Record<string, string>; body: unknown }[] = [
      { method: 'PUT', path: '/customers/21', headers: { 'if-match': '*' }, body: { name: 'Changed', status: 'active' } },
      { method: 'DELETE', path: '/customers/22', headers: { 'if-match': '*' }, body: undefined },
      { method: 'POST', path: '/customers', headers: {}, body: { name: 'New', status: 'active' } },
    ];
    const answers: Answer[] = [];
    for (const write of writes) answers.push(await call(cluster, write.method, `/api${write.path}`, { ...bearer(token), ...write.headers }, write.body));
    // Every instance has given up on what it sent (each request nginx passed on has reached the service).
    await until(async () => cluster.upstream.active() === 0, 'the gateways to give up on the stalled service');
    for (const write of writes) assert.equal(received(cluster, write.method, write.path), 1, `${write.method} ${write.path} reached the service once`);
    for (const res of answers) assertGatewayProblem(cluster, res, 504, 'HG_ERR_UPSTREAM_TIMEOUT');
  });

  it('keeps every instance in rotation: cached reads answer 200 through nginx after reads the gateways answered 504', async () => {
    for (const id of [60, 61, 62])
      assertGatewayProblem(cluster, await call(cluster, 'GET', `/api/customers/${id}`, bearer(token)), 504, 'HG_ERR_UPSTREAM_TIMEOUT');
    // Round robin: six reads reach each instance twice. nginx with no live instance answers 502 itself.
    for (let i = 0; i < 6; i++) {
      const res = await call(cluster, 'GET', '/api/customers/5', bearer(token));
      assert.equal(res.status, 200, `a cached read through nginx: ${res.status} ${res.body} (nginx: ${cluster.nginx.stderr().slice(-300)})`);
      assert.equal((JSON.parse(res.body) as { id: number }).id, 5);
    }
  });
});

describe('the deployment example when an instance dies during a write', { skip }, () => {
  let cluster: ClusterExample;
  const held = gate();

  before(async () => {
    // The instances wait for the held writes for longer than the test runs: only the kill ends them.
    cluster = await startClusterExample(nginx as string, { HYPERGATE_UPSTREAM_TIMEOUT_MS: '60000' });
  });

  after(async () => {
    held.open();
    await cluster?.close();
  });

  it('never sends a PUT or DELETE to another instance once one has it (nginx answers 502)', async () => {
    const token = await signToken(cluster.key, { claims: { scope: 'customers:read customers:write' } });
    const writes = [
      { method: 'PUT', path: '/customers/31', body: { name: 'Changed', status: 'active' } },
      { method: 'DELETE', path: '/customers/32', body: undefined },
    ];
    for (const write of writes)
      cluster.upstream.on(`${write.method} ${write.path}`, {
        kind: 'wait',
        until: held.promise,
        then: { kind: 'json', body: { id: 1, name: 'x', status: 'active' } },
      });
    const answers = writes.map((write) => call(cluster, write.method, `/api${write.path}`, { ...bearer(token), 'if-match': '*' }, write.body));
    await until(async () => writes.every((w) => received(cluster, w.method, w.path) === 1), 'both writes to reach the service');
    // Kill the instance that holds each write, as a crash would.
    const pids = cluster.gateways.map((g) => g.child.pid ?? 0);
    for (const write of writes) {
      const port = cluster.upstream.remotePorts[cluster.upstream.paths.indexOf(write.path)] ?? 0;
      const owner = ownerOfConnection(port, pids);
      assert.ok(owner !== undefined, `a gateway holds the connection that carried ${write.method} ${write.path}`);
      cluster.gateways[pids.indexOf(owner)]?.kill('SIGKILL');
    }
    // Fixed here: nginx answers 502 at once. A resend would reach the service (and be held there too).
    let answered = false;
    const settled = Promise.all(answers).finally(() => (answered = true));
    await until(async () => answered || writes.some((w) => received(cluster, w.method, w.path) > 1), 'nginx to answer the writes or send one again', 30_000);
    held.open();
    const statuses = await settled;
    for (const write of writes) assert.equal(received(cluster, write.method, write.path), 1, `${write.method} ${write.path} reached the service once`);
    for (const res of statuses) assert.equal(res.status, 502, `${res.status} ${res.body}`);
  });
});
