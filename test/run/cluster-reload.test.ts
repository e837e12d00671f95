import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { startMainWorld, type MainWorld } from '../helpers/main-world.ts';
import { spawnGateway } from '../helpers/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-cluster-reload-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('reload of a cluster (server.workers: 2)', () => {
  let world: MainWorld;
  const pidFile = join(dir, 'primary.pid');
  before(async () => {
    world = await startMainWorld(dir, 'cluster', { workers: 2, extra: { server: { pidFile } } });
  });
  after(() => world?.close());

  it('POST /reload on the primary reloads every worker and reports each', async () => {
    world.write({ cache: { maxAgeSeconds: 20 } });
    const res = await get(`${world.admin}/reload`, bearer(world.adminToken), 'POST');
    assert.equal(res.status, 200, res.text);
    const body = res.json() as { changed: string[]; restartRequired: string[]; workers: { worker: number; pid: number; ok: boolean; changed: string[] }[] };
    assert.deepEqual(body.changed, ['cache.maxAgeSeconds']);
    assert.deepEqual(body.restartRequired, []);
    assert.deepEqual(body.workers.map((w) => w.pid).sort(), world.servingPids().sort());
    for (const w of body.workers) {
      assert.equal(w.ok, true);
      assert.deepEqual(w.changed, ['cache.maxAgeSeconds']);
    }
  });

  it('POST /reload with an invalid file is 422 from the primary, and no worker is asked', async () => {
    world.write({ cache: { maxAgeSeconds: 'soon' } });
    const before = world.main.records.filter((r) => typeof r['msg'] === 'string' && /^worker \d+ reload/.test(r['msg'])).length;
    const res = await get(`${world.admin}/reload`, bearer(world.adminToken), 'POST');
    assert.equal(res.status, 422);
    assert.equal(problemOf(res).code, 'HG_ERR_RELOAD_INVALID_CONFIG');
    assert.deepEqual((res.json() as { problems: string[] }).problems, ['cache.maxAgeSeconds: expected an integer from 0 to 31536000, got "soon"']);
    assert.equal(world.main.records.filter((r) => typeof r['msg'] === 'string' && /^worker \d+ reload/.test(r['msg'])).length, before);
  });

  it("writes the primary's pid to server.pidFile, the process a SIGHUP reloads every worker through", async () => {
    world.write({ cache: { maxAgeSeconds: 25 } });
    assert.equal(Number(readFileSync(pidFile, 'utf8').trim()), world.main.child.pid);
    const done = (): number => world.main.records.filter((r) => typeof r['msg'] === 'string' && /^worker \d+ reload done$/.test(r['msg'])).length;
    const already = done();
    process.kill(world.main.child.pid as number, 'SIGHUP');
    await world.main.waitFor(() => done() === already + 2);
  });

  it('removes server.pidFile when it stops cleanly', async () => {
    world.main.kill('SIGTERM');
    assert.equal(await world.main.exited(), 0);
    assert.equal(existsSync(pidFile), false);
  });
});

describe('a cluster whose port is in use', () => {
  it('stops with the one-line error every time, never an unhandled EPIPE from a worker or the primary', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const file = join(dir, 'busy.json');
    writeFileSync(file, JSON.stringify({ server: { port, workers: 2 }, auth: { devKeyDir: join(dir, 'dev-keys') }, log: { access: false } }));
    try {
      // Workers exit while the primary and the other worker still talk over IPC: a race, so several runs.
      for (let run = 0; run < 10; run++) {
        const gw = spawnGateway(['--config', file]);
        assert.equal(await gw.exited, 1, gw.stderr());
        const lines = gw.stderr().trim().split('\n');
        assert.ok(
          lines.length > 0 &&
            lines.every(
              (l) =>
                l ===
                `hypergate: cannot listen on 127.0.0.1:${port}: the address is already in use (set server.port or HYPERGATE_SERVER_PORT; admin.port or HYPERGATE_ADMIN_PORT)`,
            ),
          `run ${run}:\n${gw.stderr()}`,
        );
      }
    } finally {
      blocker.close();
    }
  });
});
