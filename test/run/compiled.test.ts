/**
 * The compiled production start (README "Running in production"): the built dist/main.js, the
 * `hypergate` bin and the npm scripts, each run from a package built fresh into a temporary folder
 * that has no src/ (test/helpers/build.ts), so none of them can be running the TypeScript sources.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { importJWK, jwtVerify, type JWK } from 'jose';
import { buildPackage, type BuiltPackage } from '../helpers/build.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { makeKey, signToken, type TestKey } from '../helpers/keys.ts';
import { spawnGateway } from '../helpers/process.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';
import { waitFor } from '../helpers/wait.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-compiled-'));
let built: BuiltPackage;
let upstream: TestUpstream;
let key: TestKey;
/** An absolute config path whose key file is given relative to the config's own folder. */
let configFile: string;

before(async () => {
  built = await buildPackage();
  upstream = await startTestUpstream();
  key = await makeKey();
  mkdirSync(join(dir, 'etc/keys'), { recursive: true });
  writeFileSync(join(dir, 'etc/keys/public.pem'), await key.publicPem());
  configFile = join(dir, 'etc/gateway.json');
  writeFileSync(configFile, JSON.stringify({ server: { port: 0 }, upstream: { url: upstream.url }, auth: { publicKeyFile: 'keys/public.pem' } }));
});
after(async () => {
  await upstream?.close();
  built?.remove();
  rmSync(dir, { recursive: true, force: true });
});

/** A folder of its own to start from: neither the package nor the config's. */
function elsewhere(): string {
  return mkdtempSync(join(dir, 'cwd-'));
}

describe('the compiled gateway', () => {
  test('dist/main.js started from another folder with --config /abs/path.json reads the key file relative to that file and answers a request', async (t) => {
    const gw = spawnGateway(['--config', configFile], { command: [process.execPath, built.main], cwd: tmpdir() });
    t.after(() => gw.child.kill('SIGKILL'));
    const port = await gw.listening;
    const res = await get(`http://127.0.0.1:${port}/api/customers/42`, bearer(await signToken(key)));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(res.json(), { id: 42, name: 'Customer 42', status: 'active', links: { self: '/api/customers/42', orders: '/api/customers/42/orders' } });
  });

  test('--check-config works from dist/main.js: 0 for a valid file, 1 naming a key file missing next to the config', () => {
    const ok = spawnSync(process.execPath, [built.main, '--check-config', '--config', configFile], { cwd: tmpdir(), encoding: 'utf8', timeout: 20_000 });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /configuration is valid/);
    const bad = join(dir, 'etc/missing-key.json');
    writeFileSync(bad, JSON.stringify({ upstream: { url: upstream.url }, auth: { publicKeyFile: 'keys/absent.pem' } }));
    const run = spawnSync(process.execPath, [built.main, '--check-config', '--config', bad], { cwd: tmpdir(), encoding: 'utf8', timeout: 20_000 });
    assert.equal(run.status, 1);
    assert.ok(run.stderr.includes(`auth.publicKeyFile: cannot read ${join(dir, 'etc/keys/absent.pem')}`), run.stderr);
  });

  test('the hypergate bin runs from any folder on the shipped defaults, its dev keys kept in the package', async (t) => {
    const cwd = elsewhere();
    const gw = spawnGateway([], {
      command: [join(built.root, 'bin/hypergate.js')],
      cwd,
      // The embedded sample service answers in the gateway's own process, which a busy machine can
      // keep from answering its first request within the default 2 s upstream deadline.
      env: { HYPERGATE_SERVER_PORT: '0', HYPERGATE_SAMPLE_UPSTREAM_CUSTOMERS: '100', HYPERGATE_UPSTREAM_TIMEOUT_MS: '30000' },
    });
    t.after(() => gw.child.kill('SIGKILL'));
    const port = await gw.listening;
    await waitFor(() => /Authorization: Bearer [A-Za-z0-9._-]+/.test(gw.stderr()), 'the dev banner');
    const token = /Authorization: Bearer ([A-Za-z0-9._-]+)/.exec(gw.stderr())?.[1] ?? '';
    assert.equal((await get(`http://127.0.0.1:${port}/api/customers/42`, bearer(token))).status, 200);
    assert.ok(existsSync(join(built.root, '.hypergate/dev-keys/private.jwk.json')), 'dev keys in the package');
    assert.ok(!existsSync(join(cwd, '.hypergate')), 'nothing written to the cwd');
  });

  test('npm start runs the built gateway as its own process: SIGTERM sent to npm reaches it and leaves no orphan', async (t) => {
    const gw = spawnGateway(['--config', configFile], { command: ['npm', 'start', '--silent', '--'], cwd: built.root });
    let pid = 0;
    t.after(() => {
      gw.child.kill('SIGKILL');
      // An orphan would keep its upstream connection open (and the suite from ending): end it here.
      if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    });
    const port = await gw.listening;
    pid = Number(/"pid":(\d+),[^\n]*"event":"listening"/.exec(gw.stdout())?.[1]);
    assert.ok(pid > 0 && pid !== gw.child.pid, gw.stdout());
    assert.equal((await get(`http://127.0.0.1:${port}/api/customers/1`, bearer(await signToken(key)))).status, 200);
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);
    assert.match(gw.stdout(), /"event":"stopped"/);
    await waitFor(() => !alive(pid), `gateway process ${pid} to be gone`);
  });

  test('server.pidFile holds the pid of the gateway under npm start, which a SIGHUP reloads, and is removed at a clean exit', async (t) => {
    const pidFile = join(dir, 'gateway.pid');
    const file = join(dir, 'pid.json');
    // A relative path is next to the config file.
    writeFileSync(
      file,
      JSON.stringify({
        server: { port: 0, pidFile: 'gateway.pid' },
        upstream: { url: upstream.url },
        auth: { devKeyDir: join(dir, 'dev-keys') },
        log: { access: false },
      }),
    );
    const gw = spawnGateway(['--config', file], { command: ['npm', 'start', '--silent', '--'], cwd: built.root });
    t.after(() => void gw.child.kill('SIGKILL'));
    await gw.listening;
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    assert.notEqual(pid, gw.child.pid, 'the pid file names the gateway, not npm');
    assert.match(gw.stdout(), new RegExp(`"pid":${pid},[^\\n]*"event":"listening"`));
    process.kill(pid, 'SIGHUP');
    await waitFor(() => gw.stdout().includes('"msg":"config reloaded"'), 'the reload');
    assert.equal(gw.child.exitCode, null, 'npm is still running');
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);
    assert.equal(existsSync(pidFile), false);
  });

  test("npm run token runs the built minter with the package's dev keys", async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'token', '--', '--sub', 'alice', '--ttl', '60'], {
      cwd: built.root,
      timeout: 30_000,
    });
    const jwk = JSON.parse(readFileSync(join(built.root, '.hypergate/dev-keys/private.jwk.json'), 'utf8')) as JWK;
    const { d: _private, ...publicJwk } = jwk;
    const { payload } = await jwtVerify(stdout.trim(), await importJWK(publicJwk, 'ES256'));
    assert.equal(payload.sub, 'alice');
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
