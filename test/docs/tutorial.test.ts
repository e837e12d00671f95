/**
 * docs/tutorial.md, run as a reader runs it: its files are saved into a temporary folder, and its
 * commands run in order against real processes (the tutorial's own book service, hypergate from
 * src/ through tsx, redis-server), its curl commands sent with fetch. A curl command's comment says
 * what it answers (`# 201 `location: /api/books/4``: the status, and text the answer holds); a
 * command that keeps running says what it prints once it is ready (`# prints: ...`). The fixed
 * ports the tutorial names are swapped for free ones, so the run never meets another process.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { parseCurl, runCurl } from '../helpers/curl.ts';
import { freePort } from '../helpers/main-process.ts';
import { redisSkip } from '../helpers/redis.ts';
import { shellWords, tutorialSteps, type TutorialStep } from '../helpers/tutorial.ts';
import { PATIENCE_MS, waitFor } from '../helpers/wait.ts';

/** The ports the tutorial names: the book service, the gateway and its admin listener, two more of each, Redis. */
const TUTORIAL_PORTS = [4000, 8080, 9091, 8081, 8082, 9092, 9093, 6380];

const markdown = readFileSync(resolve(PROJECT_ROOT, 'docs/tutorial.md'), 'utf8');
const steps = tutorialSteps(markdown);
const sections = [...new Set(steps.map((s) => s.section))];

/** A process the tutorial starts, with what it printed so far. */
interface Started {
  readonly child: ChildProcess;
  readonly output: () => string;
}

describe('docs/tutorial.md, run step by step', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-tutorial-'));
  const vars = new Map<string, string>([['HYPERGATE', PROJECT_ROOT]]);
  const running: Started[] = [];
  const ports = new Map<number, number>();
  let upstream: Started | undefined;

  /** The text with every port the tutorial names swapped for this run's. */
  const localise = (text: string): string => text.replace(/\b(\d{4})\b/g, (m, p: string) => String(ports.get(Number(p)) ?? m));

  before(async () => {
    for (const port of TUTORIAL_PORTS) {
      assert.ok(markdown.includes(String(port)), `the tutorial no longer uses port ${port}: update TUTORIAL_PORTS`);
      ports.set(port, await freePort());
    }
  });

  after(async () => {
    for (const p of running.reverse()) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGTERM');
      await once(p.child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** The program and arguments a command runs: hypergate's command runs src/main.ts through tsx (the build in dist/ may be stale). */
  function program(words: readonly string[]): [string, string[]] {
    const [name, ...args] = words;
    if (name === 'node') {
      const [script, ...rest] = args;
      if (script === join(PROJECT_ROOT, 'bin/hypergate.js'))
        return [process.execPath, ['--import', import.meta.resolve('tsx'), join(PROJECT_ROOT, 'src/main.ts'), ...rest]];
      return [process.execPath, args];
    }
    if (name === 'redis-server') return ['redis-server', args];
    throw new Error(`the tutorial runs a command this test does not know: ${words.join(' ')}`);
  }

  /** Leading `NAME=value` words: the environment of the command after them. */
  function splitEnv(words: readonly string[]): [Record<string, string>, string[]] {
    const env: Record<string, string> = {};
    let i = 0;
    for (; i < words.length; i++) {
      const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(words[i] as string);
      if (m === null) break;
      env[m[1] as string] = m[2] as string;
    }
    return [env, words.slice(i)];
  }

  function start(words: readonly string[], env: Record<string, string>): Started {
    const [cmd, args] = program(words);
    // An upstream deadline no busy machine runs past (the tutorial leaves the default, 2 s): its book
    // service is a process of its own, which a loaded machine can keep from answering in time.
    const patient = { HYPERGATE_UPSTREAM_TIMEOUT_MS: '30000' };
    const child = spawn(cmd, args, { cwd: dir, env: { ...process.env, ...patient, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const started = { child, output: () => out };
    running.push(started);
    return started;
  }

  /** Runs a command to its end and returns what it printed; it must exit 0. */
  async function runToEnd(words: readonly string[], env: Record<string, string>): Promise<string> {
    if (words[0] === 'curl') return (await runCurl(parseCurl(words.slice(1)))).printed;
    const p = start(words, env);
    let timer: NodeJS.Timeout | undefined;
    const [code] = (await Promise.race([
      once(p.child, 'exit'),
      new Promise((_, fail) => (timer = setTimeout(() => fail(new Error(`${words.join(' ')} did not finish`)), PATIENCE_MS))),
    ]).finally(() => clearTimeout(timer))) as [number | null];
    assert.equal(code, 0, `${words.join(' ')} exits 0:\n${p.output()}`);
    return p.output();
  }

  /** A curl command, checked against its comment: the status, each `quoted` text, retried for a while when it says so. */
  async function curlAsTold(words: readonly string[], comment: string): Promise<void> {
    const expected = /^(\d{3})\b/.exec(comment);
    assert.ok(expected !== null, `a curl command in the tutorial says what it answers: ${words.join(' ')}`);
    const texts = [...comment.matchAll(/`([^`]+)`/g)].map((m) => (m[1] as string).toLowerCase());
    const request = parseCurl(words.slice(1));
    const check = async (): Promise<string | null> => {
      const answer = await runCurl(request);
      const printed = answer.printed.toLowerCase();
      if (answer.status !== Number(expected[1])) return `${request.method} ${request.url}: ${answer.status}, not ${expected[1]}:\n${answer.printed}`;
      const missing = texts.filter((t) => !printed.includes(t));
      return missing.length === 0 ? null : `${request.method} ${request.url}: the answer lacks ${missing.join(', ')}:\n${answer.printed}`;
    };
    let failure = await check();
    // "within a second": the change travels through Redis to the other instance.
    for (const deadline = Date.now() + 5_000; failure !== null && comment.includes('within a second') && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 50));
      failure = await check();
    }
    assert.equal(failure, null);
  }

  async function run(step: TutorialStep): Promise<void> {
    if (step.kind === 'file') {
      writeFileSync(join(dir, step.name), localise(step.text));
      return;
    }
    for (const command of step.commands.map(localise)) {
      const capture = /^([A-Z_][A-Z0-9_]*)=\$\((.*)\)$/.exec(command);
      if (capture !== null) {
        vars.set(capture[1] as string, (await runToEnd(shellWords(capture[2] as string, vars).words, {})).trim());
        continue;
      }
      const { words, comment } = shellWords(command, vars);
      const [env, rest] = splitEnv(words);
      const prints = /^prints: (.*)$/.exec(comment)?.[1];
      if (step.kind === 'background') {
        assert.ok(prints !== undefined, `a command that keeps running says what it prints when ready: ${command}`);
        const p = start(rest, env);
        if (rest[0] === 'node' && rest[1] === 'books.mjs') upstream = p;
        await waitFor(() => p.output().includes(prints) || p.child.exitCode !== null, `${command} to print ${prints}`, PATIENCE_MS);
        assert.ok(p.output().includes(prints), `${command} exited:\n${p.output()}`);
      } else if (rest[0] === 'curl') {
        await curlAsTold(rest, comment);
      } else {
        const printed = await runToEnd(rest, env);
        if (prints !== undefined) assert.ok(printed.includes(prints), `${command} prints ${prints}:\n${printed}`);
      }
    }
  }

  test('has steps in every section it runs, and names a file for each it starts', () => {
    assert.ok(steps.length > 10, `too few steps read: ${steps.length}`);
    const files = steps.flatMap((s) => (s.kind === 'file' ? [s.name] : []));
    for (const name of ['books.mjs', 'keys.mjs', 'mint.mjs', 'gateway.json', 'book.schema.json']) assert.ok(files.includes(name), name);
  });

  for (const section of sections) {
    const own = steps.filter((s) => s.section === section);
    const needsRedis = own.some((s) => s.kind === 'background' && s.commands.some((c) => c.startsWith('redis-server')));
    test(`section "${section}" does what it says`, { skip: needsRedis && redisSkip }, async () => {
      for (const step of own) await run(step);
    });
  }

  test('the book service saw what the tutorial says it sees', () => {
    const log = (upstream?.output() ?? '').split('\n');
    // A book of the list is cached as the book: following its link never reaches the service (the
    // one GET /books/1 is the reader's own, straight to the service, before the gateway runs).
    assert.equal(log.filter((l) => l === 'GET /books?offset=0&limit=20').length, 1, log.join('\n'));
    assert.deepEqual(
      log.filter((l) => l === 'GET /books/1'),
      ['GET /books/1'],
      log.join('\n'),
    );
    assert.ok(log.indexOf('GET /books/1') < log.indexOf('GET /books?offset=0&limit=20'), log.join('\n'));
    // One POST for the Idempotency-Key sent twice: the retry is replayed; the body the schema
    // refused and the key reused for another body never reach the service.
    assert.equal(log.filter((l) => l === 'POST /books').length, 1, log.join('\n'));
  });
});
