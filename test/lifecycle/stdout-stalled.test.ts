import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { startMain, type LogRecord, type MainProcess, type StdoutKind } from '../helpers/main-process.ts';
import { sample } from '../helpers/metrics.ts';
import { waitFor } from '../helpers/wait.ts';
import { SOME_UPSTREAM } from '../helpers/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-stalled-'));
// Removed once every test of the file has run.
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A 404 whose access line is ~3.7 KB: the log outgrows a pipe and the buffer in a few dozen
 * requests, and each line is still short enough (under PIPE_BUF) to reach a shared pipe whole.
 */
const LONG_PATH = `/${'x'.repeat(3500)}`;
/** A request the gateway has not answered in this long counts as frozen. */
const ANSWER_WITHIN_MS = 5000;
/** Requests sent at most while waiting for the first dropped line. */
const MAX_REQUESTS = 2000;

interface Running {
  readonly gw: MainProcess;
  readonly url: string;
  readonly adminUrl: string;
}

/** A real `npm start` process (one process, or a primary with 2 workers) whose stdout the test reads until told not to. */
async function start(t: { after(fn: () => unknown): void }, workers: number, maxBufferBytes: number, stdout: StdoutKind = 'pipe'): Promise<Running> {
  const file = join(dir, `config-${randomBytes(4).toString('hex')}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      server: { port: 0, workers },
      admin: { port: 0 },
      upstream: SOME_UPSTREAM,
      auth: { secret: randomBytes(32).toString('hex'), algorithms: ['HS256'] },
      log: { maxBufferBytes },
    }),
  );
  const gw = startMain(['--config', file], {}, stdout);
  t.after(() => gw.kill('SIGKILL'));
  const admin = await gw.waitFor((r) => r['event'] === 'admin-listening');
  // Behind `script`, the gateway is the child's child: ended by its pid.
  t.after(() => {
    try {
      process.kill(admin['pid'] as number, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  await waitFor(() => gw.records.filter((r) => r['event'] === 'listening').length === workers, `${workers} listening worker(s)`, 20_000);
  const listening = gw.records.find((r) => r['event'] === 'listening') as LogRecord;
  return { gw, url: `http://127.0.0.1:${listening['port'] as number}`, adminUrl: `http://127.0.0.1:${admin['port'] as number}` };
}

/** One request on a connection of its own (so a cluster spreads them), failing when the gateway does not answer in time. */
async function answer(url: string): Promise<{ status: number; text: string }> {
  const res = await request(url, { reset: true, headersTimeout: ANSWER_WITHIN_MS, bodyTimeout: ANSWER_WITHIN_MS });
  return { status: res.statusCode, text: await res.body.text() };
}

async function droppedLines(run: Running): Promise<number> {
  return sample((await answer(`${run.adminUrl}/metrics`)).text, 'hypergate_log_lines_dropped_total') ?? Number.NaN;
}

/** Sends long-path requests until /metrics counts a dropped log line; every one of them must be answered. */
async function fillUntilDropped(run: Running): Promise<number> {
  for (let i = 1; i <= MAX_REQUESTS; i++) {
    const res = await answer(`${run.url}${LONG_PATH}`).catch((err: Error) => assert.fail(`request ${i} with stdout stalled got no answer: ${err.message}`));
    assert.equal(res.status, 404);
    if (i % 10 === 0) {
      const dropped = await droppedLines(run);
      if (dropped > 0) return dropped;
    }
  }
  return assert.fail(`no log line was dropped after ${MAX_REQUESTS} requests`);
}

const accessLines = (gw: MainProcess): LogRecord[] => gw.records.filter((r) => r['msg'] === 'request');

for (const workers of [1, 2]) {
  describe(`${workers === 1 ? 'one process' : 'a cluster of 2 workers'} whose stdout reader has stalled`, () => {
    test('keeps answering requests and /healthz, and counts the dropped lines in /metrics', async (t) => {
      const run = await start(t, workers, 65_536);
      run.gw.stallStdout();
      assert.ok((await fillUntilDropped(run)) > 0);
      for (let i = 0; i < 50; i++) assert.equal((await answer(`${run.url}${LONG_PATH}`)).status, 404, 'still answering after lines were dropped');
      assert.equal((await answer(`${run.adminUrl}/healthz`)).status, 200);
      assert.equal((await answer(`${run.url}/api`)).status, 401, 'a request that reaches the pipeline is answered too');
    });

    test('writes one warning per process with the number of dropped lines once the reader is back', async (t) => {
      const run = await start(t, workers, 65_536);
      run.gw.stallStdout();
      const before = await fillUntilDropped(run);
      run.gw.resumeStdout();
      const warnings = (): LogRecord[] => run.gw.records.filter((r) => r['event'] === 'log-dropped');
      await run.gw.waitFor((r) => r['event'] === 'log-dropped');
      // Every process that dropped lines says so once its queue is written out; then the counter stops.
      const warned = (): number => warnings().reduce((n, w) => n + (w['dropped'] as number), 0);
      let total = await droppedLines(run);
      for (let polls = 0; warned() !== total && polls < 400; polls++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        total = await droppedLines(run);
      }
      assert.equal(warned(), total, 'the warnings add up to the counter');
      assert.ok(total >= before);
      const pids = warnings().map((w) => w['pid']);
      assert.deepEqual(pids, [...new Set(pids)], 'one warning per process');
      assert.equal(warnings()[0]?.['level'], 40);
      // The reader keeps up again: a new request's line arrives, and nothing more is dropped.
      await answer(`${run.url}/after-the-stall`);
      await run.gw.waitFor((r) => r['msg'] === 'request' && r['path'] === '/after-the-stall');
      assert.equal(await droppedLines(run), total);
      assert.deepEqual(
        run.gw.records.filter((r) => 'raw' in r),
        [],
        'every line arrives whole, none cut into by another process',
      );
    });

    test('exits on SIGTERM (code 0) while stdout is still stalled', async (t) => {
      const run = await start(t, workers, 65_536);
      run.gw.stallStdout();
      await fillUntilDropped(run);
      run.gw.kill('SIGTERM');
      const code = await Promise.race([run.gw.exited(), new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000))]);
      assert.equal(code, 0);
    });

    test('a clean exit waits for a slow but live reader: every line logged before it arrives', async (t) => {
      // Well under the default buffer, and far more than the pipe holds: lines wait in the process when SIGTERM comes.
      const count = 150;
      const run = await start(t, workers, 4 * 1024 * 1024);
      run.gw.stallStdout();
      for (let i = 0; i < count; i++) assert.equal((await answer(`${run.url}${LONG_PATH}?n=${i}`)).status, 404);
      run.gw.kill('SIGTERM');
      run.gw.resumeStdout();
      assert.equal(await run.gw.exited(), 0);
      await run.gw.waitFor((r) => r['msg'] === 'stopped' && r['pid'] === run.gw.child.pid);
      assert.equal(accessLines(run.gw).filter((r) => r['path'] === LONG_PATH).length, count);
      assert.equal(run.gw.records.filter((r) => r['event'] === 'log-dropped').length, 0);
      assert.deepEqual(
        run.gw.records.filter((r) => 'raw' in r),
        [],
        'every line arrives whole, none cut into by another process',
      );
    });
  });
}

describe('one process whose terminal has stalled (a TTY nobody reads, as after Ctrl-S)', () => {
  test(
    'keeps answering requests and /healthz, and counts the dropped lines in /metrics',
    { skip: process.platform !== 'linux' && 'util-linux script gives the process a terminal' },
    async (t) => {
      const run = await start(t, 1, 65_536, 'terminal');
      run.gw.stallStdout();
      assert.ok((await fillUntilDropped(run)) > 0);
      assert.equal((await answer(`${run.adminUrl}/healthz`)).status, 200);
      assert.equal((await answer(`${run.url}/api`)).status, 401);
      // And it stops cleanly: `script` exits with the gateway's code once it can write again.
      const pid = run.gw.records.find((r) => r['event'] === 'listening')?.['pid'] as number;
      process.kill(pid, 'SIGTERM');
      run.gw.resumeStdout();
      assert.equal(await run.gw.exited(), 0);
    },
  );
});
