import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { get } from '../helpers/gateway.ts';
import { freePort } from '../helpers/main-process.ts';
import { spawnGateway } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-orphan-'));
// Removed once every test of the file has run.
after(() => rmSync(dir, { recursive: true, force: true }));

describe('a cluster worker whose primary dies', () => {
  test('writes its pending access lines before it exits', async (t) => {
    const port = await freePort();
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ server: { port, workers: 2 }, auth: { devKeyDir: join(dir, 'dev-keys') } }));
    const gw = spawnGateway(['--config', file]);
    t.after(() => gw.child.kill('SIGKILL'));
    await waitFor(() => (gw.stdout().match(/"event":"listening"/g) ?? []).length === 2, 'both workers listening');
    const pids = [...gw.stdout().matchAll(/"pid":(\d+)[^\n]*"event":"listening"/g)].map((m) => Number(m[1]));
    t.after(() => {
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    });
    // Workers inherit the primary's stdout: the pipe ends once every worker has exited too.
    const ended = once(gw.child.stdout as NodeJS.ReadableStream, 'end');
    const res = await get(`http://127.0.0.1:${port}/orphan-check`, { 'x-request-id': 'orphan-check-1' });
    assert.equal(res.status, 404);
    // The access line waits up to 100 ms for its batch; the primary dies well within that.
    gw.child.kill('SIGKILL');
    await ended;
    assert.match(gw.stdout(), /"reqId":"orphan-check-1"/, 'the line of the answered request reached stdout');
  });
});
