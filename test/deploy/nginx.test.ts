import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { signToken, type TestKey } from '../helpers/keys.ts';
import { freePort, startMain, type MainProcess } from '../helpers/main-process.ts';
import { findNginx, startDeployBasics, type Closers } from '../helpers/nginx.ts';
import type { TestUpstream } from '../helpers/upstream.ts';

const nginx = findNginx();
const skip = nginx === null ? 'nginx is not installed (apt-get install -y nginx; .ci/run does it): the load-balancer test cannot run' : false;

const CONF = resolve(PROJECT_ROOT, 'deploy/nginx.conf');

/** The run line from deploy/nginx.conf's comments, split into nginx's arguments. */
function documentedRunLine(): string[] {
  const line = /^#\s+nginx (.+)$/m.exec(readFileSync(CONF, 'utf8'));
  assert.ok(line, 'deploy/nginx.conf documents how to run it (a comment line "#   nginx ...")');
  return (line[1] as string).trim().split(/\s+/);
}

/** Two gateway processes behind nginx started exactly as deploy/nginx.conf says, on a fresh, empty prefix. */
interface Stack {
  readonly key: TestKey;
  readonly upstream: TestUpstream;
  readonly gateways: MainProcess[];
  /** The gateways' own addresses, http://127.0.0.1:<port>. */
  readonly direct: string[];
  /** nginx's address. */
  readonly proxy: string;
  nginxErr(): string;
  read(base: string, id: number, token: string): Promise<{ status: number; type: string; body: string }>;
  close(): Promise<void>;
}

async function startStack(gatewayConfig: Record<string, unknown> = {}): Promise<Stack> {
  const closers: Closers = [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.reverse()) await close();
  };
  try {
    return await buildStack(gatewayConfig, closers, closeAll);
  } catch (err) {
    await closeAll();
    throw err;
  }
}

async function buildStack(gatewayConfig: Record<string, unknown>, closers: Closers, closeAll: () => Promise<void>): Promise<Stack> {
  const { dir, key, jwks, upstream } = await startDeployBasics(closers, 'nginx');
  const file = join(dir, 'gateway.json');
  writeFileSync(
    file,
    JSON.stringify({
      ...gatewayConfig,
      upstream: { url: upstream.url, ...(gatewayConfig['upstream'] as object) },
      auth: { jwksUrl: jwks.url },
      admin: { port: null },
      log: { access: false },
    }),
  );
  const ports = [await freePort(), await freePort()];
  const gateways = ports.map((port) => startMain(['--config', file], { HYPERGATE_SERVER_PORT: String(port) }));
  closers.push(async () => {
    for (const g of gateways) g.kill('SIGKILL');
    await Promise.all(gateways.map((g) => g.exited()));
  });
  await Promise.all(gateways.map((g) => g.waitFor((r) => r['event'] === 'listening')));

  const proxyPort = await freePort();
  const conf = readFileSync(CONF, 'utf8')
    .replace('127.0.0.1:8080', `127.0.0.1:${ports[0]}`)
    .replace('127.0.0.1:8081', `127.0.0.1:${ports[1]}`)
    .replace('listen 127.0.0.1:8000', `listen 127.0.0.1:${proxyPort}`);
  assert.ok(conf.includes(String(proxyPort)) && conf.includes(String(ports[1])), 'deploy/nginx.conf has the documented addresses');
  // The documented run line, with only its two paths moved into the temporary folder.
  const prefix = join(dir, 'prefix');
  mkdirSync(prefix);
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const args = documentedRunLine();
  const p = args.indexOf('-p');
  const c = args.indexOf('-c');
  assert.ok(p !== -1 && c !== -1, `the run line names the prefix (-p) and the file (-c): ${args.join(' ')}`);
  args[p + 1] = prefix;
  args[c + 1] = join(dir, 'nginx.conf');
  const proxy = spawn(nginx as string, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let nginxErr = '';
  proxy.stderr?.on('data', (chunk: Buffer) => {
    nginxErr += chunk.toString();
  });
  const proxyExit = new Promise<number | null>((done) => proxy.once('exit', (code) => done(code)));
  closers.push(async () => {
    proxy.kill('SIGQUIT');
    await proxyExit;
  });
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 16 });
  closers.push(() => agent.close());
  const read: Stack['read'] = async (base, id, token) => {
    const res = await request(`${base}/api/customers/${id}`, { headers: { authorization: `Bearer ${token}` }, dispatcher: agent });
    return { status: res.statusCode, type: String(res.headers['content-type']), body: await res.body.text() };
  };
  // Wait until nginx answers (bounded); an nginx that cannot start exits, and says why.
  const base = `http://127.0.0.1:${proxyPort}`;
  let up = false;
  for (let i = 0; i < 100 && !up && proxy.exitCode === null; i++) {
    try {
      await (await request(`${base}/api`, { dispatcher: agent })).body.dump();
      up = true;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  assert.ok(up, `nginx started with the documented run line (nginx ${args.join(' ')}): ${nginxErr}`);
  return {
    key,
    upstream,
    gateways,
    direct: ports.map((port) => `http://127.0.0.1:${port}`),
    proxy: base,
    nginxErr: () => nginxErr,
    read,
    close: closeAll,
  };
}

describe('stateless behind a real nginx (deploy/nginx.conf)', { skip }, () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack?.close());

  it('accepts one token, minted once, on both gateway instances', async () => {
    const token = await signToken(stack.key);
    for (const base of stack.direct) {
      const res = await stack.read(base, 5, token);
      assert.equal(res.status, 200);
      assert.equal((JSON.parse(res.body) as { id: number }).id, 5);
    }
  });

  it('answers every request correctly through nginx while one gateway is killed mid-run', async () => {
    const token = await signToken(stack.key);
    const total = 400;
    const results: { id: number; status: number; body: string }[] = [];
    let next = 0;
    let killed = false;
    const workerLoop = async (): Promise<void> => {
      while (next < total) {
        const n = next++;
        if (n === 100 && !killed) {
          killed = true;
          stack.gateways[0]?.kill('SIGKILL');
        }
        const id = 1 + (n % 50);
        const res = await stack.read(stack.proxy, id, token);
        results.push({ id, status: res.status, body: res.body });
      }
    };
    await Promise.all(Array.from({ length: 8 }, workerLoop));
    assert.equal(await stack.gateways[0]?.exited(), null); // it really died (by signal)
    assert.equal(results.length, total);
    for (const r of results) {
      assert.equal(r.status, 200, `${r.status} ${r.body} (nginx: ${stack.nginxErr().slice(-300)})`);
      const body = JSON.parse(r.body) as { id: number; links: { self: string } };
      assert.equal(body.id, r.id);
      assert.equal(body.links.self, `/api/customers/${r.id}`);
    }
  });
});

/**
 * A gateway's 502, 503 and 504 are its answers about the customer service, not signs of a dead
 * instance: nginx passes them on, and keeps every instance in rotation for the next request.
 */
async function assertEveryInstanceServes(stack: Stack, token: string): Promise<void> {
  // Round robin: four reads reach each instance twice. nginx with no live instance answers 502.
  for (let i = 0; i < 4; i++) {
    const res = await stack.read(stack.proxy, 5, token);
    assert.equal(res.status, 200, `a cached read through nginx right after: ${res.status} ${res.body} (nginx: ${stack.nginxErr().slice(-300)})`);
  }
}

/** The answer is the gateway's problem (not nginx's own error page) with this code. */
function assertGatewayProblem(res: { status: number; type: string; body: string }, status: number, code: string): void {
  assert.equal(res.status, status, res.body);
  assert.equal(res.type, 'application/problem+json', res.body);
  assert.equal((JSON.parse(res.body) as { code: string }).code, code);
}

describe('gateway error answers through nginx', { skip }, () => {
  let stack: Stack;
  let token = '';
  before(async () => {
    stack = await startStack({ upstream: { timeoutMs: 300 } });
    token = await signToken(stack.key);
    // Customer 5 is cached on both instances.
    for (const base of stack.direct) assert.equal((await stack.read(base, 5, token)).status, 200);
  });
  after(() => stack?.close());

  it('leaves every instance in rotation after a bad upstream record (the gateway answers 502)', async () => {
    stack.upstream.on('/customers/77', { kind: 'json', body: { id: 77 } });
    for (let i = 0; i < 2; i++) assertGatewayProblem(await stack.read(stack.proxy, 77, token), 502, 'HG_ERR_UPSTREAM_BAD_GATEWAY');
    await assertEveryInstanceServes(stack, token);
  });

  it('leaves every instance in rotation after an upstream time-out (the gateway answers 504)', async () => {
    stack.upstream.on('/customers/78', { kind: 'hang' });
    for (let i = 0; i < 2; i++) assertGatewayProblem(await stack.read(stack.proxy, 78, token), 504, 'HG_ERR_UPSTREAM_TIMEOUT');
    await assertEveryInstanceServes(stack, token);
  });
});

describe('an open circuit breaker through nginx', { skip }, () => {
  let stack: Stack;
  let token = '';
  before(async () => {
    // One failure opens a gateway's breaker, for longer than the test runs.
    stack = await startStack({ upstream: { breaker: { failures: 1, cooldownMs: 600_000 } } });
    token = await signToken(stack.key);
    for (const base of stack.direct) assert.equal((await stack.read(base, 5, token)).status, 200);
  });
  after(() => stack?.close());

  it('leaves every instance in rotation while their breakers are open (the gateways answer 503)', async () => {
    stack.upstream.on('/customers/88', { kind: 'json', status: 500, body: {} });
    // Open each instance's breaker with a failing miss sent to it directly.
    for (const base of stack.direct) assertGatewayProblem(await stack.read(base, 88, token), 502, 'HG_ERR_UPSTREAM_BAD_GATEWAY');
    for (let i = 0; i < 2; i++) assertGatewayProblem(await stack.read(stack.proxy, 89, token), 503, 'HG_ERR_UPSTREAM_UNAVAILABLE');
    await assertEveryInstanceServes(stack, token);
  });
});
