import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { freePort, startMain } from '../helpers/main-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { SOME_UPSTREAM } from '../helpers/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-worker-log-'));
// Removed once every test of the file has run.
after(() => rmSync(dir, { recursive: true, force: true }));

describe('access lines of a cluster', () => {
  test('name the worker that answered (its cluster worker id)', async (t) => {
    const port = await freePort();
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        server: { port, workers: 2 },
        admin: { port: null },
        upstream: SOME_UPSTREAM,
        auth: { secret: 'w'.repeat(64), algorithms: ['HS256'] },
      }),
    );
    const main = startMain(['--config', file]);
    t.after(() => main.kill('SIGKILL'));
    await waitFor(() => main.records.filter((r) => r['event'] === 'listening').length === 2, 'two listening workers', 20_000);
    const count = 20;
    // A connection of its own each: the primary hands connections to the workers in turn.
    for (let i = 0; i < count; i++) await (await request(`http://127.0.0.1:${port}/worker-check`, { reset: true })).body.text();
    const lines = () => main.records.filter((r) => r['msg'] === 'request' && r['path'] === '/worker-check');
    await waitFor(() => lines().length === count, `${count} access lines`);
    assert.deepEqual([...new Set(lines().map((r) => r['worker']))].sort(), [1, 2]);
  });
});
