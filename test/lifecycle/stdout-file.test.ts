import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { get } from '../helpers/gateway.ts';
import { freePort } from '../helpers/main-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { SOME_UPSTREAM } from '../helpers/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-stdout-file-'));
// Removed once every test of the file has run.
after(() => rmSync(dir, { recursive: true, force: true }));

describe('a process whose stdout is a file', () => {
  test('writes every line to it, access lines included, and exits cleanly on SIGTERM', async (t) => {
    const port = await freePort();
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({ server: { port }, admin: { port: null }, upstream: SOME_UPSTREAM, auth: { secret: 'f'.repeat(64), algorithms: ['HS256'] } }),
    );
    const logFile = join(dir, 'out.log');
    const fd = openSync(logFile, 'w');
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), '--config', config], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', fd, 'pipe'],
    });
    closeSync(fd);
    t.after(() => child.kill('SIGKILL'));
    const exited = once(child, 'exit');
    const lines = (): Record<string, unknown>[] =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await waitFor(() => lines().some((r) => r['event'] === 'listening'), 'the listening line in the file', 20_000);
    const count = 300;
    for (let i = 0; i < count; i++) assert.equal((await get(`http://127.0.0.1:${port}/${'y'.repeat(1000)}`)).status, 404);
    child.kill('SIGTERM');
    assert.deepEqual(await exited, [0, null]);
    assert.equal(lines().filter((r) => r['msg'] === 'request').length, count);
    assert.ok(lines().some((r) => r['msg'] === 'stopped'));
  });
});
