import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from 'undici';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { SOME_UPSTREAM } from '../helpers/config.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The command line of --check-config for `config` (written to a file; a string is written as is). */
function checkConfigArgs(config: unknown): string[] {
  const file = join(dir, `check-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
  return ['--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), '--check-config', '--config', file];
}

function checkConfig(config: unknown, env: Record<string, string> = {}): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, checkConfigArgs(config), {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: run.status, out: run.stdout + run.stderr };
}

/** --check-config as a child process that does not block the event loop (for a test JWKS server in this process). */
function checkConfigAsync(config: unknown): Promise<{ status: number | null; out: string }> {
  const child = spawn(process.execPath, checkConfigArgs(config), { cwd: PROJECT_ROOT, env: process.env, timeout: 20_000 });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((done) => child.once('close', (status) => done({ status, out })));
}

describe('npm start -- --help', () => {
  it('points at the documentation file that holds each thing, not at the README', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), '--help'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /--config FILE +JSON file loaded over config\/default\.json \(see docs\/configuration\.md\)/);
    assert.doesNotMatch(run.stdout, /README/);
  });
});

describe('npm start -- --check-config', () => {
  it('exits 0 for a valid file', () => {
    const { status, out } = checkConfig({ server: { port: 8081 }, upstream: { url: 'http://127.0.0.1:9999' } });
    assert.equal(status, 0, out);
    assert.match(out, /configuration is valid/);
  });

  it('exits 1 listing every problem of the file and the environment', () => {
    const { status, out } = checkConfig({ server: { port: 'x', prot: 1 }, log: { level: 'loud' } });
    assert.equal(status, 1);
    assert.match(out, /server\.port: expected an integer/);
    assert.match(out, /server\.prot: unknown key/);
    assert.match(out, /3 problem\(s\)/);
    assert.match(out, /log\.level: expected one of debug, info, warn, error, silent/);
    assert.match(checkConfig({}, { HYPERGATE_LOG_ACCESS: 'maybe' }).out, /HYPERGATE_LOG_ACCESS \(log\.access\): expected true or false/);
  });

  it('reports a problem in an environment variable under that variable, not under a file', () => {
    const { status, out } = checkConfig({}, { HYPERGATE_SERVER_PORT: '70000', HYPERGATE_SERVER_PROT: '1' });
    assert.equal(status, 1);
    assert.match(out, /\.json and the environment: 2 problem\(s\)/);
    assert.match(out, /^ {2}HYPERGATE_SERVER_PORT \(server\.port\): expected an integer from 0 to 65535, got 70000$/m);
    assert.match(out, /^ {2}HYPERGATE_SERVER_PROT: not a configuration variable \(did you mean "HYPERGATE_SERVER_PORT"\?\)$/m);
  });

  it('exits 1 for a file that is not JSON, and for a key source that cannot be read', () => {
    assert.equal(checkConfig('{ nope').status, 1);
    const missing = checkConfig({ upstream: SOME_UPSTREAM, auth: { jwksFile: join(dir, 'absent.json') } });
    assert.equal(missing.status, 1);
    assert.match(missing.out, /auth\.jwksFile: cannot read/);
  });
});

describe('npm start -- --check-config with a JWKS URL', () => {
  it('fetches the JWKS: one it cannot fetch is a warning naming the URL and the cause, and the exit code stays 0', () => {
    // Nothing listens on port 9 of loopback.
    const { status, out } = checkConfig({ upstream: SOME_UPSTREAM, auth: { jwksUrl: 'http://127.0.0.1:9/jwks.json' } });
    assert.equal(status, 0, out);
    assert.match(out, /configuration is valid/);
    assert.match(out, /warning: auth\.jwksUrl: could not fetch http:\/\/127\.0\.0\.1:9\/jwks\.json: connection refused/);
  });

  it('says nothing more when the JWKS answers', async () => {
    const key = await makeKey('ES256');
    const jwks = await startJwksServer([key.publicJwk]);
    try {
      const run = checkConfigAsync({ upstream: SOME_UPSTREAM, auth: { jwksUrl: jwks.url } });
      const { status, out } = await run;
      assert.equal(status, 0, out);
      assert.doesNotMatch(out, /warning/);
      assert.equal(jwks.fetches(), 1);
    } finally {
      await jwks.close();
    }
  });
});

describe('SIGHUP reload', () => {
  let jwks: JwksServer;
  let upstream: TestUpstream;
  let key1: TestKey;
  let key2: TestKey;
  let main: MainProcess;
  let client: Client;
  let connects = 0;
  let disconnects = 0;
  const file = join(dir, 'reload.json');
  const write = (extra: Record<string, unknown>): void =>
    writeFileSync(file, JSON.stringify({ server: { port: 0 }, admin: { port: null }, upstream: { url: upstream.url }, auth: { jwksUrl: jwks.url }, ...extra }));

  before(async () => {
    key1 = await makeKey('ES256');
    key2 = await makeKey('ES256');
    jwks = await startJwksServer([key1.publicJwk]);
    upstream = await startTestUpstream();
    write({});
    main = startMain(['--config', file]);
    const listening = await main.waitFor((r) => r['event'] === 'listening');
    client = new Client(`http://127.0.0.1:${listening['port'] as number}`, { pipelining: 1, keepAliveTimeout: 60_000 });
    client.on('connect', () => connects++);
    client.on('disconnect', () => disconnects++);
  });
  after(async () => {
    await client.close();
    main.kill('SIGTERM');
    await main.exited();
    await upstream.close();
    await jwks.close();
  });

  async function status(token: string, id = 1): Promise<number> {
    const res = await client.request({ path: `/api/customers/${id}`, method: 'GET', headers: { authorization: `Bearer ${token}` } });
    await res.body.dump();
    return res.statusCode;
  }

  it('applies a changed file and new keys without dropping the connection', async () => {
    const old = await signToken(key1);
    const rotated = await signToken(key2);
    assert.equal(await status(old), 200);
    assert.equal(await status(rotated), 401); // key2 is not published yet
    jwks.setKeys([key2.publicJwk]);
    write({ auth: { jwksUrl: jwks.url, requiredScope: 'customers:read' }, log: { level: 'info', access: false } });
    main.kill('SIGHUP');
    await main.waitFor((r) => r['msg'] === 'config reloaded');
    assert.equal(await status(rotated, 2), 200);
    assert.equal(await status(old, 3), 401); // key1 is gone after the reload
    assert.equal(connects, 1);
    assert.equal(disconnects, 0);
  });

  it('during a JWKS outage keeps the keys, and the log says so', async () => {
    const token = await signToken(key2, { claims: { sub: 'outage' } });
    assert.equal(await status(token, 5), 200);
    jwks.setFault({ kind: 'status', status: 500 });
    try {
      main.kill('SIGHUP');
      const warning = await main.waitFor((r) => r['event'] === 'reload' && r['keysKept'] === true);
      assert.match(
        String(warning['msg']),
        /config reloaded, but the JWKS could not be fetched from http:\/\/127\.0\.0\.1:\d+\/\.well-known\/jwks\.json \(HTTP 500\): the key set fetched \d+ s ago is kept, and so are the verified tokens/,
      );
      assert.equal(await status(token, 6), 200);
      assert.equal(await status(await signToken(key2, { claims: { sub: 'never-seen' } }), 7), 200);
    } finally {
      jwks.setFault(null);
    }
  });

  it('rejects an invalid file, logs each problem and keeps serving with the old config', async () => {
    write({ server: { port: 'nope' }, cache: { maxEntries: -1 } });
    main.kill('SIGHUP');
    await main.waitFor((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('config reload rejected: 2 problem(s)'));
    await main.waitFor((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('cache.maxEntries: expected an integer'));
    assert.equal(await status(await signToken(key2), 4), 200);
    assert.equal(connects, 1);
    assert.equal(main.child.exitCode, null);
  });
});
