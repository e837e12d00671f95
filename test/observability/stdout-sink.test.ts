import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { StdoutSink } from '../../src/observability/stdout-sink.ts';
import { waitFor } from '../helpers/wait.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-sink-'));
// Removed once every test of the file has run.
after(() => rmSync(dir, { recursive: true, force: true }));

/** A real pipe (a FIFO): the sink writes to one end, the test reads the other when it chooses. */
interface Pipe {
  readonly writeFd: number;
  /** Everything the pipe holds now (the read end never blocks). */
  drain(): string;
  closeReader(): void;
}

let fifos = 0;
function pipe(t: { after(fn: () => unknown): void }): Pipe {
  const path = join(dir, `fifo-${fifos++}`);
  execFileSync('mkfifo', [path]);
  // The read end first, non-blocking, so opening the write end does not wait for a reader.
  let readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(path, constants.O_WRONLY);
  t.after(() => {
    if (readFd !== -1) closeSync(readFd);
  });
  const buf = Buffer.alloc(1024 * 1024);
  return {
    writeFd,
    drain: () => {
      let text = '';
      for (;;) {
        let n: number;
        try {
          n = readSync(readFd, buf, 0, buf.length, null);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return text;
          throw err;
        }
        if (n === 0) return text;
        text += buf.toString('utf8', 0, n);
      }
    },
    closeReader: () => {
      closeSync(readFd);
      readFd = -1;
    },
  };
}

const lineOf = (i: number, size = 100): string => `${String(i).padStart(8, '0')} ${'x'.repeat(size - 10)}\n`;

/** Reads the pipe until `done()`, letting the sink write between reads. */
async function readUntil(p: Pipe, done: (text: string) => boolean): Promise<string> {
  let text = '';
  await waitFor(() => {
    text += p.drain();
    return done(text);
  }, 'the lines to come out of the pipe');
  return text;
}

describe('the stdout sink on a pipe', () => {
  test('writes each chunk at once while the pipe has room', (t) => {
    const p = pipe(t);
    const sink = new StdoutSink(p.writeFd, { maxBytes: 65_536, shared: false });
    sink.write(lineOf(1));
    sink.write(Buffer.from(lineOf(2)));
    assert.equal(p.drain(), lineOf(1) + lineOf(2));
    assert.equal(sink.dropped, 0);
  });

  test('keeps what the stalled reader has no room for, up to maxBytes, then drops and counts lines; says how many once the reader took the rest', async (t) => {
    const p = pipe(t);
    const sink = new StdoutSink(p.writeFd, { maxBytes: 65_536, shared: false });
    const told: number[] = [];
    sink.recovered = (dropped) => told.push(dropped);
    // 4 lines a chunk, as an access batch: the pipe (64 KiB) and then the queue fill up.
    let sent = 0;
    for (let i = 0; sink.dropped === 0 && i < 10_000; i += 4) {
      sink.write(lineOf(i) + lineOf(i + 1) + lineOf(i + 2) + lineOf(i + 3));
      sent += 4;
    }
    assert.ok(sink.dropped > 0 && sink.dropped % 4 === 0, `${sink.dropped} lines dropped, whole chunks`);
    const kept = sent - sink.dropped;
    const text = await readUntil(p, (s) => s.split('\n').length - 1 === kept);
    assert.deepEqual(
      text
        .split('\n')
        .slice(0, -1)
        .map((l) => Number(l.slice(0, 8))),
      Array.from({ length: kept }, (_, i) => i),
      'the lines kept come out whole and in order',
    );
    await waitFor(() => told.length > 0, 'the recovered call');
    assert.deepEqual(told, [sink.dropped]);
  });

  test('shared with other processes, writes a chunk far larger than the pipe holds in pieces, every byte in order', async (t) => {
    const p = pipe(t);
    const sink = new StdoutSink(p.writeFd, { maxBytes: 64 * 1024 * 1024, shared: true });
    // ~5 MB of 1000-byte lines, far more than the pipe holds: thousands of pieces wait.
    const lines = 5000;
    let chunk = '';
    for (let i = 0; i < lines; i++) chunk += lineOf(i, 1000);
    sink.write(Buffer.from(chunk));
    const text = await readUntil(p, (s) => s.length === chunk.length);
    assert.equal(text, chunk);
    assert.equal(sink.dropped, 0);
  });

  test('drained() resolves once the queue is written, and after its time-out when the reader has stalled', async (t) => {
    const p = pipe(t);
    const sink = new StdoutSink(p.writeFd, { maxBytes: 4 * 1024 * 1024, shared: false });
    await sink.drained(60_000); // nothing waits: at once
    for (let i = 0; i < 200; i++) sink.write(lineOf(i, 1000));
    let drained = false;
    const waiting = sink.drained(60_000).then(() => {
      drained = true;
    });
    await sink.drained(10); // the reader stalls: the time-out ends the wait
    assert.equal(drained, false, 'the long wait still waits');
    await readUntil(p, () => drained);
    await waiting;
  });

  test('a reader that has gone: what waits and every later line are dropped and counted, and nothing throws', async (t) => {
    const p = pipe(t);
    const sink = new StdoutSink(p.writeFd, { maxBytes: 4 * 1024 * 1024, shared: false });
    for (let i = 0; i < 1000; i++) sink.write(lineOf(i, 1000)); // past the pipe: lines wait
    p.closeReader();
    await waitFor(() => {
      sink.write(lineOf(0));
      return sink.dropped > 0;
    }, 'the write to fail');
    const before = sink.dropped;
    sink.write(lineOf(1) + lineOf(2));
    assert.equal(sink.dropped, before + 2);
    await sink.drained(60_000); // failed: nothing more to wait for
  });
});

describe('the stdout sink on a file', () => {
  test('writes synchronously, every line', (t) => {
    const path = join(dir, 'out.log');
    const fd = openSync(path, 'w');
    t.after(() => closeSync(fd));
    const sink = new StdoutSink(fd, { maxBytes: 65_536, shared: false });
    for (let i = 0; i < 1000; i++) sink.write(lineOf(i));
    const read = openSync(path, 'r');
    t.after(() => closeSync(read));
    const buf = Buffer.alloc(200_000);
    assert.equal(readSync(read, buf, 0, buf.length, 0), 1000 * 100);
    assert.equal(sink.dropped, 0);
  });

  test('a closed fd: every line is dropped and counted', () => {
    const path = join(dir, 'closed.log');
    const fd = openSync(path, 'w');
    closeSync(fd);
    const sink = new StdoutSink(fd, { maxBytes: 65_536, shared: false });
    sink.write(lineOf(1) + lineOf(2));
    assert.equal(sink.dropped, 2);
  });
});
