import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { signToken } from '../helpers/keys.ts';
import { startMainWorld, type MainWorld } from '../helpers/main-world.ts';
import { spawnGateway } from '../helpers/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-reload-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('POST /reload on the admin listener of one gateway process', () => {
  let world: MainWorld;
  before(async () => {
    world = await startMainWorld(dir, 'single');
  });
  after(() => world?.close());

  it('needs a token with the admin scope', async () => {
    world.write({ cache: { maxAgeSeconds: 31 } });
    assert.equal((await get(`${world.admin}/reload`, {}, 'POST')).status, 401);
    assert.equal((await get(`${world.admin}/reload`, bearer(await signToken(world.key)), 'POST')).status, 403);
    assert.equal(
      world.main.records.some((r) => r['msg'] === 'config reloaded'),
      false,
    );
  });

  it('answers 200 with the changed key paths and those that need a restart', async () => {
    world.write({ server: { port: 1 }, cache: { maxAgeSeconds: 30 } });
    const res = await get(`${world.admin}/reload`, bearer(world.adminToken), 'POST');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json(), { changed: ['server.port', 'cache.maxAgeSeconds'], restartRequired: ['server.port'] });
    const cached = await get(`${world.base}/api/customers/7`, bearer(await signToken(world.key)));
    assert.equal(cached.headers['cache-control'], 'max-age=30');
  });

  it('answers 422 listing every problem of an invalid file, and keeps serving with the running config', async () => {
    world.write({ server: { port: 'nope' }, cache: { maxEntries: -1 } });
    const res = await get(`${world.admin}/reload`, bearer(world.adminToken), 'POST');
    assert.equal(res.status, 422);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(problemOf(res).code, 'HG_ERR_RELOAD_INVALID_CONFIG');
    const { problems } = res.json() as { problems: string[] };
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.match(problems[0] ?? '', /^server\.port: expected an integer/);
    assert.match(problems[1] ?? '', /^cache\.maxEntries: expected an integer/);
    assert.equal((await get(`${world.base}/api/customers/8`, bearer(await signToken(world.key)))).status, 200);
  });

  it('answers 422 naming keys that cannot be loaded, and keeps the keys it has', async () => {
    world.write({ auth: { jwksUrl: null, jwksFile: join(dir, 'absent-jwks.json') } });
    const res = await get(`${world.admin}/reload`, bearer(world.adminToken), 'POST');
    assert.equal(res.status, 422);
    assert.match((res.json() as { problems: string[] }).problems[0] ?? '', /^auth\.jwksFile: cannot read .*absent-jwks\.json \(ENOENT\)/);
    assert.equal((await get(`${world.base}/api/customers/9`, bearer(await signToken(world.key)))).status, 200);
  });

  it('refuses another method with 405 and Allow: POST', async () => {
    const res = await get(`${world.admin}/reload`, bearer(world.adminToken));
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'POST');
  });
});

// Its pid file under `npm start`: test/run/compiled.test.ts, which has the built package npm starts.
describe('server.pidFile', () => {
  it('stops the start with one line when the file cannot be written', async () => {
    const file = join(dir, 'bad-pid.json');
    writeFileSync(file, JSON.stringify({ server: { port: 0, pidFile: join(dir, 'no-such-dir', 'gateway.pid') }, auth: { devKeyDir: join(dir, 'dev-keys') } }));
    const gw = spawnGateway(['--config', file]);
    assert.equal(await gw.exited, 1);
    assert.match(gw.stderr(), /^hypergate: cannot write server\.pidFile .*no-such-dir\/gateway\.pid: ENOENT$/m);
  });
});
