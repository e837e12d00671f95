import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { freePort, startMain, type MainProcess } from '../helpers/main-process.ts';
import { findNginx } from '../helpers/nginx.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const nginx = findNginx();
const skip = nginx === null ? 'nginx is not installed (apt-get install -y nginx; .ci/run does it): the load-balancer test cannot run' : false;

describe('stateless behind a real nginx (deploy/nginx.conf)', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-nginx-'));
  let key: TestKey;
  let jwks: JwksServer;
  let upstream: TestUpstream;
  let gateways: MainProcess[] = [];
  let ports: number[] = [];
  let proxy: ChildProcess;
  let proxyPort = 0;
  let nginxErr = '';
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 16 });

  before(async () => {
    key = await makeKey('ES256');
    jwks = await startJwksServer([key.publicJwk]);
    upstream = await startTestUpstream();
    const file = join(dir, 'gateway.json');
    writeFileSync(file, JSON.stringify({ upstream: { url: upstream.url }, auth: { jwksUrl: jwks.url }, admin: { port: null }, log: { access: false } }));
    ports = [await freePort(), await freePort()];
    gateways = ports.map((port) => startMain(['--config', file], { HYPERGATE_SERVER_PORT: String(port) }));
    await Promise.all(gateways.map((g) => g.waitFor((r) => r['event'] === 'listening')));

    proxyPort = await freePort();
    const conf = readFileSync(resolve(PROJECT_ROOT, 'deploy/nginx.conf'), 'utf8')
      .replace('127.0.0.1:8080', `127.0.0.1:${ports[0]}`)
      .replace('127.0.0.1:8081', `127.0.0.1:${ports[1]}`)
      .replace('listen 127.0.0.1:8000', `listen 127.0.0.1:${proxyPort}`);
    assert.ok(conf.includes(String(proxyPort)) && conf.includes(String(ports[1])), 'deploy/nginx.conf has the documented addresses');
    mkdirSync(join(dir, 'tmp'), { recursive: true });
    mkdirSync(join(dir, 'logs'), { recursive: true });
    writeFileSync(join(dir, 'nginx.conf'), conf);
    proxy = spawn(nginx as string, ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    proxy.stderr?.on('data', (chunk: Buffer) => {
      nginxErr += chunk.toString();
    });
    // Wait until nginx answers.
    for (let i = 0; i < 100; i++) {
      try {
        const res = await request(`http://127.0.0.1:${proxyPort}/api/customers/1`, { dispatcher: agent });
        await res.body.dump();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });

  after(async () => {
    proxy?.kill('SIGQUIT');
    for (const g of gateways) g.kill('SIGKILL');
    await Promise.all(gateways.map((g) => g.exited()));
    await agent.close();
    await upstream?.close();
    await jwks?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function read(base: string, id: number, token: string): Promise<{ status: number; body: string; requestId: string }> {
    const res = await request(`${base}/api/customers/${id}`, { headers: { authorization: `Bearer ${token}` }, dispatcher: agent });
    return { status: res.statusCode, body: await res.body.text(), requestId: String(res.headers['x-request-id']) };
  }

  it('accepts one token, minted once, on both gateway instances', async () => {
    const token = await signToken(key);
    for (const port of ports) {
      const res = await read(`http://127.0.0.1:${port}`, 5, token);
      assert.equal(res.status, 200);
      assert.equal((JSON.parse(res.body) as { id: number }).id, 5);
    }
  });

  it('answers every request correctly through nginx while one gateway is killed mid-run', async () => {
    const token = await signToken(key);
    const total = 400;
    const results: { id: number; status: number; body: string }[] = [];
    let next = 0;
    let killed = false;
    const workerLoop = async (): Promise<void> => {
      while (next < total) {
        const n = next++;
        if (n === 100 && !killed) {
          killed = true;
          gateways[0]?.kill('SIGKILL');
        }
        const id = 1 + (n % 50);
        const res = await read(`http://127.0.0.1:${proxyPort}`, id, token);
        results.push({ id, status: res.status, body: res.body });
      }
    };
    await Promise.all(Array.from({ length: 8 }, workerLoop));
    assert.equal(await gateways[0]?.exited(), null); // it really died (by signal)
    assert.equal(results.length, total);
    for (const r of results) {
      assert.equal(r.status, 200, `${r.status} ${r.body} (nginx: ${nginxErr.slice(-300)})`);
      const body = JSON.parse(r.body) as { id: number; links: { self: string } };
      assert.equal(body.id, r.id);
      assert.equal(body.links.self, `/api/customers/${r.id}`);
    }
  });
});
