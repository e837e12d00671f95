import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, test } from 'node:test';
import { bearer, get, send } from '../helpers/gateway.ts';
import { makeKey, signToken } from '../helpers/keys.ts';
import { ROOT, spawnGateway } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { startTestUpstream } from '../helpers/upstream.ts';
import { SOME_UPSTREAM } from '../helpers/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-main-'));
// Removed once every test of the file has run.
after(() => rmSync(dir, { recursive: true, force: true }));
const devKeyDir = join(dir, 'dev-keys');

function configFile(name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(value));
  return file;
}

/**
 * An upstream deadline no busy machine runs past: the embedded sample service answers in the
 * gateway's own process, and a test upstream in this one, either of which a busy machine can keep
 * from answering within the default 2 s.
 */
const PATIENT_UPSTREAM = { timeoutMs: 30_000 };

describe('the hypergate process', () => {
  test('starts on embedded defaults, logs one line each for listen, upstream and auth, and serves the printed curl', async (t) => {
    const gw = spawnGateway(['--config', configFile('dev.json', { server: { port: 0 }, upstream: PATIENT_UPSTREAM, auth: { devKeyDir } })]);
    t.after(() => gw.child.kill('SIGKILL'));
    const port = await gw.listening;
    await waitFor(() => /Authorization: Bearer/.test(gw.stderr()), 'the dev banner');
    const lines = gw
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; event: string });
    assert.deepEqual(
      lines.slice(0, 3).map((l) => l.event),
      ['listening', 'upstream', 'auth'],
    );
    assert.match(lines[1]?.msg ?? '', /embedded sample customer service/);
    assert.match(lines[2]?.msg ?? '', /DEV MODE/);
    assert.match(gw.stderr(), /DEV AUTH MODE/);
    const token = /Authorization: Bearer ([A-Za-z0-9._-]+)/.exec(gw.stderr())?.[1];
    assert.ok(token, gw.stderr());
    const res = await get(`http://127.0.0.1:${port}/api/customers/42`, bearer(token));
    assert.equal(res.status, 200);
    const body = res.json() as { id: number; name: string; status: string; links: { self: string } };
    assert.equal(body.id, 42);
    assert.equal(body.links.self, '/api/customers/42');
  });

  test('the dev banner prints a PATCH its token may make, and that PATCH changes the customer', async (t) => {
    const gw = spawnGateway(['--config', configFile('dev-write.json', { server: { port: 0 }, upstream: PATIENT_UPSTREAM, auth: { devKeyDir } })]);
    t.after(() => gw.child.kill('SIGKILL'));
    const port = await gw.listening;
    await waitFor(() => /-X PATCH/.test(gw.stderr()), 'the PATCH example in the dev banner');
    const line =
      gw
        .stderr()
        .split('\n')
        .find((l) => l.includes('-X PATCH')) ?? '';
    const token = /Authorization: Bearer ([A-Za-z0-9._-]+)/.exec(line)?.[1];
    assert.ok(token, line);
    assert.match(line, /If-Match: \*/);
    assert.match(line, /application\/merge-patch\+json/);
    const body = /-d '([^']+)'/.exec(line)?.[1];
    assert.equal(body, '{"status":"active"}');
    const url = `http://127.0.0.1:${port}/api/customers/42`;
    const res = await send(url, 'PATCH', { ...bearer(token), 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body);
    assert.equal(res.status, 200, res.text);
    assert.equal((res.json() as { status: string }).status, 'active');
    assert.equal(((await get(url, bearer(token))).json() as { status: string }).status, 'active');
  });

  test('without the shipped customers the dev banner points at the API root, whose links lead to what is declared', async (t) => {
    const upstream = await startTestUpstream();
    t.after(() => upstream.close());
    const things = { path: '/api/things/{id}', params: { id: 'integer' }, upstream: '/things/{id}', fields: ['id'], rel: 'thing' };
    const gw = spawnGateway([
      '--config',
      configFile('no-customers.json', {
        server: { port: 0 },
        auth: { devKeyDir },
        upstream: { url: upstream.url },
        upstreams: { catalogue: { url: `${upstream.url}/v2` } },
        resources: { customers: null, orders: null, things },
      }),
    ]);
    t.after(() => gw.child.kill('SIGKILL'));
    const port = await gw.listening;
    await waitFor(() => /Authorization: Bearer/.test(gw.stderr()), 'the dev banner');
    const line =
      gw
        .stderr()
        .split('\n')
        .find((l) => l.includes('curl -i')) ?? '';
    assert.match(line, new RegExp(`http://127\\.0\\.0\\.1:${port}/api$`), line);
    assert.doesNotMatch(gw.stderr(), /customers|-X PATCH/);
    const token = /Authorization: Bearer ([A-Za-z0-9._-]+)/.exec(line)?.[1];
    assert.ok(token, line);
    const root = await get(`http://127.0.0.1:${port}/api`, bearer(token));
    assert.equal(root.status, 200, root.text);
    assert.match(root.text, /\/api\/things\/\{id\}/);
    // Each declared service is named at start, as the default upstream is.
    const services = gw
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; service?: string; msg: string })
      .filter((l) => l.event === 'upstream');
    assert.deepEqual(
      services.map((l) => l.service),
      [undefined, 'catalogue'],
    );
    assert.equal(services[1]?.msg, `upstream catalogue ${upstream.url}/v2`);
  });

  test('npm run token mints a dev token the running gateway accepts', async (t) => {
    const file = configFile('dev-token.json', { server: { port: 0 }, upstream: PATIENT_UPSTREAM, auth: { devKeyDir } });
    const gw = spawnGateway(['--config', file]);
    t.after(() => gw.child.kill('SIGKILL'));
    const port = await gw.listening;
    const run = promisify(execFile);
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/dev/mint-token.ts', '--config', file, '--sub', 'alice', '--scope', 'customers:read', '--ttl', '60'],
      { cwd: ROOT },
    );
    const token = stdout.trim();
    assert.equal((JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { sub: string }).sub, 'alice');
    assert.equal((await get(`http://127.0.0.1:${port}/api/customers/1`, bearer(token))).status, 200);
    const { stdout: narrow } = await run(process.execPath, ['--import', 'tsx', 'src/dev/mint-token.ts', '--config', file, '--scope', 'other'], { cwd: ROOT });
    assert.equal((await get(`http://127.0.0.1:${port}/api/customers/1`, bearer(narrow.trim()))).status, 403);
  });

  test('a dev admin token minted as docs/operations.md says purges the cache on the admin listener', async (t) => {
    const file = configFile('dev-admin.json', { server: { port: 0 }, upstream: PATIENT_UPSTREAM, admin: { port: 0 }, auth: { devKeyDir } });
    const gw = spawnGateway(['--config', file], { env: { HYPERGATE_ADMIN_PORT: '0' } });
    t.after(() => gw.child.kill('SIGKILL'));
    await gw.listening;
    await waitFor(() => /"event":"admin-listening","port":\d+/.test(gw.stdout()), 'the admin listener');
    const adminPort = Number(/"event":"admin-listening","port":(\d+)/.exec(gw.stdout())?.[1]);
    const run = promisify(execFile);
    // ADMIN_TOKEN=$(npm run -s token -- --sub ops --scope hypergate:admin), with the gateway's --config.
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/dev/mint-token.ts', '--config', file, '--sub', 'ops', '--scope', 'hypergate:admin'],
      { cwd: ROOT },
    );
    const res = await send(`http://127.0.0.1:${adminPort}/cache/customers/42`, 'DELETE', bearer(stdout.trim()));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json(), { purged: 0 });
  });

  test('an invalid config file exits 1 listing every problem, without listening', async () => {
    const gw = spawnGateway(['--config', configFile('bad.json', { server: { port: 'x', hots: 'y' }, cache: { maxAgeSeconds: -1 } })]);
    assert.equal(await gw.exited, 1);
    const err = gw.stderr();
    assert.match(err, /invalid configuration, not starting/);
    assert.match(err, /server\.port: expected an integer/);
    assert.match(err, /server\.hots: unknown key \(did you mean "host"\?\)/);
    assert.match(err, /cache\.maxAgeSeconds: expected an integer/);
    assert.doesNotMatch(gw.stdout(), /listening/);
  });

  test('a port in use is one clear line and exit 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const gw = spawnGateway(['--config', configFile('busy.json', { server: { port }, auth: { devKeyDir } })]);
      assert.equal(await gw.exited, 1);
      assert.match(gw.stderr(), new RegExp(`hypergate: cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use`));
    } finally {
      blocker.close();
    }
  });

  test('a host no interface has is one clear line naming server.host, and exit 1', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): documentation only, never assigned to a machine.
    const gw = spawnGateway(['--config', configFile('nowhere.json', { server: { host: '192.0.2.1', port: 0 }, auth: { devKeyDir } })]);
    assert.equal(await gw.exited, 1);
    assert.match(
      gw.stderr(),
      /^hypergate: cannot listen on 192\.0\.2\.1:0: no network interface of this machine has that address \(set server\.host or HYPERGATE_SERVER_HOST; admin\.host or HYPERGATE_ADMIN_HOST\)$/m,
    );
    assert.doesNotMatch(gw.stderr(), /\n\s+at /);
  });

  test('an unreadable key file is one clear line and exit 1', async () => {
    const gw = spawnGateway(['--config', configFile('nokey.json', { server: { port: 0 }, upstream: SOME_UPSTREAM, auth: { publicKeyFile: 'missing.pem' } })]);
    assert.equal(await gw.exited, 1);
    assert.match(gw.stderr(), /hypergate: auth\.publicKeyFile: cannot read .*missing\.pem \(ENOENT\)/);
  });

  test('an unknown flag is refused with the usage', async () => {
    const gw = spawnGateway(['--conifg', 'x.json']);
    assert.equal(await gw.exited, 1);
    assert.match(gw.stderr(), /unknown argument "--conifg"/);
  });
});

describe('graceful stop', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  after(async () => {
    for (const c of cleanup) await c();
  });

  async function world(): Promise<{ file: string; token: string; upstream: Awaited<ReturnType<typeof startTestUpstream>> }> {
    const key = await makeKey();
    const upstream = await startTestUpstream();
    cleanup.push(() => upstream.close());
    const jwksFile = join(dir, `jwks-${key.kid}.json`);
    writeFileSync(jwksFile, JSON.stringify({ keys: [key.publicJwk] }));
    const file = configFile(`stop-${key.kid}.json`, {
      server: { port: 0, drainTimeoutMs: 30_000 },
      upstream: { url: upstream.url, ...PATIENT_UPSTREAM },
      auth: { jwksFile },
    });
    return { file, token: await signToken(key), upstream };
  }

  test('SIGTERM lets in-flight requests finish, refuses new connections, and exits 0', async () => {
    const { file, token, upstream } = await world();
    upstream.on('*', { kind: 'delay', ms: 600, then: { kind: 'json', body: { id: 1, name: 'Slow', status: 'active' } } });
    const gw = spawnGateway(['--config', file]);
    cleanup.push(() => void gw.child.kill('SIGKILL'));
    const port = await gw.listening;
    const inFlight = get(`http://127.0.0.1:${port}/api/customers/1`, bearer(token));
    // In flight: the upstream holds it (600 ms) from when it arrives, however long that took.
    await waitFor(() => upstream.active() === 1, 'the request to reach the upstream');
    gw.child.kill('SIGTERM');
    const res = await inFlight;
    assert.equal(res.status, 200);
    assert.equal((res.json() as { name: string }).name, 'Slow');
    assert.equal(await gw.exited, 0);
    await assert.rejects(get(`http://127.0.0.1:${port}/api/customers/1`, bearer(token)), /ECONNREFUSED/);
    assert.match(gw.stdout(), /"event":"shutdown"/);
    assert.match(gw.stdout(), /"event":"stopped"/);
  });
  // `npm start` itself (the compiled gateway, SIGTERM through npm): test/run/compiled.test.ts.
});

describe('draining in process', () => {
  test('a request that arrives on a busy keep-alive connection during the drain is answered and told to close', async () => {
    const { startFixture } = await import('../helpers/fixture.ts');
    const { connect } = await import('node:net');
    const fx = await startFixture();
    const token = await fx.token();
    fx.upstream.on('/customers/1', { kind: 'delay', ms: 300, then: { kind: 'json', body: { id: 1, name: 'A', status: 'active' } } });
    const socket = connect(fx.gw.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const request = (id: number): string => `GET /api/customers/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    socket.write(request(1));
    // Busy: the upstream holds the first request (300 ms) from when it arrives.
    await waitFor(() => fx.upstream.active() === 1, 'the first request to reach the upstream');
    const closed = fx.gw.gateway.close(5000);
    socket.write(request(2));
    await ended;
    await closed;
    const answers = received.split('HTTP/1.1 ').slice(1);
    assert.equal(answers.length, 2, received);
    assert.ok(
      answers.every((a) => a.startsWith('200 ')),
      received,
    );
    assert.match(answers[1] ?? '', /Connection: close/i);
    await fx.upstream.close();
    await fx.jwks.close();
  });
});
