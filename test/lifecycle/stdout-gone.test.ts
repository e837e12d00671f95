import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { get } from '../helpers/gateway.ts';
import { spawnGateway } from '../helpers/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-stdout-'));
// Removed once every test of the file has run.
after(() => rmSync(dir, { recursive: true, force: true }));

describe('a process whose stdout reader has gone', () => {
  test('keeps serving when an access-log batch meets EPIPE', async (t) => {
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ server: { port: 0 }, auth: { devKeyDir: join(dir, 'dev-keys') } }));
    const gw = spawnGateway(['--config', file]);
    t.after(() => gw.child.kill('SIGKILL'));
    const port = await gw.listening;
    // The log reader (a shipper, a `| head`) goes away: the pipe's only read end closes.
    gw.child.stdout?.destroy();
    // Long paths fill the 64 KB batch within a few requests, so it is written (and meets EPIPE)
    // during a request, not 100 ms later.
    const path = `/${'x'.repeat(7000)}`;
    for (let i = 0; i < 12; i++) {
      const res = await get(`http://127.0.0.1:${port}${path}`).catch((err: Error) => err);
      assert.ok(!(res instanceof Error), `request ${i} failed: ${res instanceof Error ? res.message : ''}; stderr:\n${gw.stderr()}`);
      assert.equal(res.status, 404);
    }
    assert.equal(gw.child.exitCode, null, `the process is still running; stderr:\n${gw.stderr()}`);
    assert.equal((await get(`http://127.0.0.1:${port}/healthz`).catch(() => ({ status: 0 }))).status !== 0, true);
    // Its exit does not wait for a reader that is gone.
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);
  });
});
