import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { get, bearer } from '../helpers/gateway.ts';
import { sample } from '../helpers/metrics.ts';
import { freePort, startMain, type MainProcess } from '../helpers/main-process.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

describe('server.workers: a cluster of gateway workers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-workers-'));
  let key: TestKey;
  let jwks: JwksServer;
  let upstream: TestUpstream;
  let main: MainProcess;
  let base = '';
  let admin = '';
  let token = '';

  before(async () => {
    key = await makeKey('ES256');
    jwks = await startJwksServer([key.publicJwk]);
    upstream = await startTestUpstream();
    const port = await freePort();
    const adminPort = await freePort();
    const file = join(dir, 'cluster.json');
    writeFileSync(
      file,
      JSON.stringify({
        server: { port, workers: 2, drainTimeoutMs: 2000 },
        admin: { port: adminPort },
        upstream: { url: upstream.url },
        auth: { jwksUrl: jwks.url },
        log: { access: false },
      }),
    );
    main = startMain(['--config', file]);
    base = `http://127.0.0.1:${port}`;
    admin = `http://127.0.0.1:${adminPort}`;
    token = await signToken(key);
    await main.waitFor((r) => r['event'] === 'admin-listening');
    for (let n = 0; n < 2; n++) await main.waitFor((r) => r['event'] === 'listening' && r['worker'] === n + 1);
  });
  after(async () => {
    main.kill('SIGKILL');
    await main.exited();
    await upstream.close();
    await jwks.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts two workers that share the port, with the admin listener on the primary', async () => {
    const pids = new Set(main.records.filter((r) => r['event'] === 'listening').map((r) => r['pid']));
    assert.equal(pids.size, 2);
    assert.equal((await get(`${admin}/readyz`)).status, 200);
    for (let i = 0; i < 20; i++) assert.equal((await get(`${base}/api/customers/${1 + (i % 5)}`, bearer(token))).status, 200);
  });

  it('aggregates the metrics of every worker', async () => {
    const text = (await get(`${admin}/metrics`)).text;
    assert.equal(sample(text, 'hypergate_http_requests_total', { route: '/api/customers/:id', method: 'GET', status: '200' }), 20);
    const labels = { http_request_method: 'GET', http_route: '/api/customers/:id', http_response_status_code: '200' };
    assert.equal(sample(text, 'http_server_request_duration_seconds_count', labels), 20);
    assert.equal(sample(text, 'http_server_request_duration_seconds_bucket', { ...labels, le: '+Inf' }), 20);
    // Which worker answered which read decides hits and misses; together they are the 20 reads.
    const outcomes = ['hit', 'miss', 'collapsed', 'stale'].map(
      (outcome) => sample(text, 'hypergate_cache_requests_total', { resource: 'customers', outcome }) ?? 0,
    );
    assert.equal(
      outcomes.reduce((a, b) => a + b, 0),
      20,
    );
  });

  it('broadcasts a purge to every worker', async () => {
    const adminToken = await signToken(key, { claims: { scope: 'hypergate:admin' } });
    const res = await get(`${admin}/cache`, bearer(adminToken), 'DELETE');
    assert.equal(res.status, 200);
    assert.ok((res.json() as { purged: number }).purged >= 5);
  });

  it('turns SIGHUP into a reload of every worker', async () => {
    main.kill('SIGHUP');
    const done = (): number => main.records.filter((r) => typeof r['msg'] === 'string' && /^worker \d+ reload done$/.test(r['msg'])).length;
    await main.waitFor(() => done() === 2);
    assert.equal((await get(`${base}/api/customers/1`, bearer(token))).status, 200);
  });

  it('restarts a worker that dies, while the other keeps answering', async () => {
    const victim = main.records.find((r) => r['event'] === 'listening' && r['worker'] === 1)?.['pid'] as number;
    process.kill(victim, 'SIGKILL');
    await main.waitFor((r) => r['event'] === 'worker-exit');
    for (let i = 0; i < 10; i++) assert.equal((await get(`${base}/api/customers/2`, bearer(token))).status, 200);
    await main.waitFor((r) => r['event'] === 'listening' && r['pid'] !== victim && r['worker'] === 3);
  });

  it('drains every worker on SIGTERM and exits 0', async () => {
    main.kill('SIGTERM');
    assert.equal(await main.exited(), 0);
    assert.ok(main.records.some((r) => r['msg'] === 'stopped'));
  });
});
