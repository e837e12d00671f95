import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { Agent, request } from 'undici';
import { buildPackage, type BuiltPackage } from '../helpers/build.ts';
import { CLUSTER_EXAMPLE } from '../helpers/cluster-example.ts';
import { bearer } from '../helpers/gateway.ts';
import { freePort } from '../helpers/main-process.ts';
import { findNginx } from '../helpers/nginx.ts';
import { redisSkip } from '../helpers/redis.ts';
import { until } from '../helpers/shared-world.ts';

const nginx = findNginx();
const skip = nginx === null ? 'nginx is not installed (apt-get install -y nginx; .ci/run does it)' : redisSkip;
const run = promisify(execFile);

/** The environment without the test's own HYPERGATE_ settings: run.sh is given only what an operator would give it. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('HYPERGATE_')) env[name] = value;
  return { ...env, ...extra };
}

/** Processes whose parent is `pid`, with their command lines (Linux /proc). */
function childrenOf(pid: number): { pid: number; argv: string[] }[] {
  const found: { pid: number; argv: string[] }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid) continue;
      found.push({
        pid: Number(entry),
        argv: readFileSync(`/proc/${entry}/cmdline`, 'utf8')
          .split('\0')
          .filter((a) => a !== ''),
      });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Whether any process of this process group is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('deploy/cluster/run.sh started from another folder', { skip }, () => {
  let pkg: BuiltPackage;
  let elsewhere = '';
  let script: ChildProcess;
  let output = '';
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 8 });
  let front = '';
  let direct: string[] = [];
  let admins: string[] = [];
  let env: NodeJS.ProcessEnv = {};

  /** A dev-mode token, minted by the package's compiled token command as an operator would. */
  const mint = async (sub: string, scope: string): Promise<string> => {
    const { stdout } = await run(
      process.execPath,
      [join(pkg.root, 'dist/dev/mint-token.js'), '--config', join(pkg.root, 'deploy/cluster/gateway.json'), '--sub', sub, '--scope', scope],
      { cwd: elsewhere, env },
    );
    return stdout.trim();
  };

  before(async () => {
    // The package as it ships (dist/, no src/), with the example beside it as in the repository.
    pkg = await buildPackage();
    cpSync(CLUSTER_EXAMPLE, join(pkg.root, 'deploy/cluster'), { recursive: true });
    elsewhere = mkdtempSync(join(tmpdir(), 'hypergate-elsewhere-'));
    const [proxy, g0, g1, g2, a0, a1, a2, redisPort, sample] = await Promise.all(Array.from({ length: 9 }, () => freePort()));
    const gateways = [g0, g1, g2] as number[];
    const adminPorts = [a0, a1, a2] as number[];
    env = cleanEnv({
      CLUSTER_PROXY_PORT: String(proxy),
      CLUSTER_GATEWAY_PORTS: gateways.join(' '),
      CLUSTER_ADMIN_PORTS: adminPorts.join(' '),
      CLUSTER_REDIS_PORT: String(redisPort),
      CLUSTER_SAMPLE_PORT: String(sample),
      HYPERGATE_LOG_ACCESS: 'false',
    });
    // Its own process group, so that whatever it leaves behind can be found and stopped.
    script = spawn('bash', [join(pkg.root, 'deploy/cluster/run.sh')], { cwd: elsewhere, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    script.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    script.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    front = `http://127.0.0.1:${proxy}`;
    direct = gateways.map((p) => `http://127.0.0.1:${p}`);
    admins = adminPorts.map((p) => `http://127.0.0.1:${p}`);
    const redis = new Redis(`redis://127.0.0.1:${redisPort}`, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    redis.on('error', () => {}); // refused until run.sh's Redis listens
    try {
      await until(
        async () => {
          if (script.exitCode !== null) return true;
          if (redis.status === 'wait') await redis.connect();
          const [, subscribed] = (await redis.call('PUBSUB', 'NUMSUB', 'hypergate:invalidate')) as [string, number];
          const res = await request(`${front}/api`, { dispatcher: agent });
          await res.body.dump();
          return subscribed === 3 && res.statusCode === 401;
        },
        'run.sh: nginx answering and three gateways subscribed to Redis',
        60_000,
      );
    } finally {
      redis.disconnect();
    }
    assert.equal(script.exitCode, null, `run.sh ended early:\n${output}`);
  });

  after(async () => {
    const pgid = script?.pid;
    if (pgid !== undefined && groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
    await agent.close();
    pkg?.remove();
    if (elsewhere !== '') rmSync(elsewhere, { recursive: true, force: true });
  });

  it('runs the compiled gateways with the Node flags of npm start, and the sample service once', () => {
    const start = (JSON.parse(readFileSync(join(pkg.root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
    const flags = start.slice(start.indexOf('node') + 1, start.indexOf('dist/main.js'));
    const children = childrenOf(script.pid ?? 0);
    const gateways = children.filter((c) => c.argv.some((a) => a.endsWith('/dist/main.js')));
    assert.equal(gateways.length, 3, JSON.stringify(children));
    for (const g of gateways) {
      assert.deepEqual(g.argv.slice(1, 1 + flags.length), flags, g.argv.join(' '));
      assert.equal(g.argv[1 + flags.length], join(pkg.root, 'dist/main.js'));
    }
    assert.equal(children.filter((c) => c.argv.some((a) => a.endsWith('/dist/sample-upstream/main.js'))).length, 1, JSON.stringify(children));
    assert.ok(
      children.every((c) => !c.argv.some((a) => a.includes('tsx') || a.endsWith('.ts'))),
      JSON.stringify(children),
    );
  });

  it('reads back through instance B, after a purge, what was written through instance A', async () => {
    const [a, b, c] = direct as [string, string, string];
    const reader = await mint('alice', 'customers:read customers:write');
    const read = async (base: string): Promise<{ name: string; etag: string }> => {
      const res = await request(`${base}/api/customers/8`, { headers: bearer(reader), dispatcher: agent });
      const text = await res.body.text();
      assert.equal(res.statusCode, 200, `${text}\n${output.slice(-2000)}`);
      return { name: (JSON.parse(text) as { name: string }).name, etag: String(res.headers['etag']) };
    };
    // B and C hold the present version in their caches.
    const before = (await read(b)).name;
    assert.notEqual(before, 'Renamed');
    assert.equal((await read(c)).name, before);
    const { etag } = await read(a);
    const put = await request(`${a}/api/customers/8`, {
      method: 'PUT',
      headers: { ...bearer(reader), 'if-match': etag, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Renamed', status: 'active' }),
      dispatcher: agent,
    });
    assert.equal(put.statusCode, 200, await put.body.text());
    assert.equal((await read(a)).name, 'Renamed');
    // The purge drops every copy (each instance's cache and Redis's): B and C must ask the service.
    const admin = await mint('ops', 'hypergate:admin');
    const purge = await request(`${admins[0]}/cache/customers/8`, { method: 'DELETE', headers: bearer(admin), dispatcher: agent });
    assert.deepEqual(await purge.body.json(), { purged: 1, instances: 3 });
    // The purge reaches B and C through Redis a moment after its answer. With a sample service of
    // their own, they would answer the old name for good.
    await until(async () => (await read(b)).name === 'Renamed' && (await read(c)).name === 'Renamed', 'B and C to answer what A wrote', 5000);
    for (let i = 0; i < 3; i++) assert.equal((await read(front)).name, 'Renamed');
  });

  it('stops every process it started on SIGTERM', async () => {
    const pgid = script.pid ?? 0;
    script.kill('SIGTERM');
    // The group holds run.sh itself and everything it started; the gateways drain first (at most server.drainTimeoutMs).
    await until(async () => !groupAlive(pgid), 'run.sh and every process it started to end', 30_000);
  });
});
