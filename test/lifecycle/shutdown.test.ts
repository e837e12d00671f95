import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { makeKey, signToken } from '../helpers/keys.ts';
import { spawnGateway, type GatewayProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { defaultRecord, startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-shutdown-'));
// Removed once every test of the file has run.
after(() => rmSync(dir, { recursive: true, force: true }));
const IN_FLIGHT = 200;

interface World {
  readonly gw: GatewayProcess;
  readonly port: number;
  readonly token: string;
  readonly upstream: TestUpstream;
  /** Lets every held upstream answer go. */
  release(): void;
}

/**
 * A real gateway process over a real upstream that holds every customer answer until released,
 * so requests stay in flight exactly as long as the test needs: no timing guesses.
 */
async function world(cleanup: Array<() => unknown>, server: Record<string, unknown>): Promise<World> {
  const key = await makeKey();
  const upstream = await startTestUpstream();
  cleanup.push(() => upstream.close());
  let release = (): void => {};
  const until = new Promise<void>((resolve) => {
    release = resolve;
  });
  cleanup.push(() => release());
  for (let id = 1; id <= IN_FLIGHT; id++) upstream.on(`/customers/${id}`, { kind: 'wait', until, then: { kind: 'json', body: defaultRecord(id) } });
  const jwksFile = join(dir, `jwks-${key.kid}.json`);
  writeFileSync(jwksFile, JSON.stringify({ keys: [key.publicJwk] }));
  const file = join(dir, `config-${key.kid}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      server: { port: 0, ...server },
      // Room for every request at once, and an upstream deadline far beyond the test.
      upstream: { url: upstream.url, connections: 256, timeoutMs: 60_000 },
      auth: { jwksFile },
      log: { access: false },
    }),
  );
  const gw = spawnGateway(['--config', file]);
  cleanup.push(() => gw.child.kill('SIGKILL'));
  return { gw, port: await gw.listening, token: await signToken(key), upstream, release };
}

/** Starts IN_FLIGHT requests for distinct uncached customers; each settles with its status or its error. */
function flood(w: World, agent: Agent): Array<Promise<number | Error>> {
  return Array.from({ length: IN_FLIGHT }, (_, i) =>
    request(`http://127.0.0.1:${w.port}/api/customers/${i + 1}`, { dispatcher: agent, headers: { authorization: `Bearer ${w.token}` } }).then(
      async (res) => {
        const body = (await res.body.json()) as { id?: number };
        assert.equal(body.id ?? i + 1, i + 1);
        return res.statusCode;
      },
      (err: Error) => err,
    ),
  );
}

/** Resolves with the connect error code, or 'connected'. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

async function sigterm(w: World): Promise<number> {
  const sentAt = Date.now();
  w.gw.child.kill('SIGTERM');
  // The log line is written just before the listener closes; the child's stdout reaches us a little later.
  await waitFor(() => /"event":"shutdown"/.test(w.gw.stdout()), 'the shutdown log line');
  return sentAt;
}

describe('graceful shutdown of a real process', () => {
  const cleanup: Array<() => unknown> = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  test(`SIGTERM with ${IN_FLIGHT} slow requests in flight: every one completes with 200, new connections are refused, exit 0 within the drain time-out`, async () => {
    const drainTimeoutMs = 20_000;
    const w = await world(cleanup, { drainTimeoutMs });
    const agent = new Agent({ connections: IN_FLIGHT });
    cleanup.push(() => agent.destroy());
    const answers = flood(w, agent);
    await waitFor(() => w.upstream.hits() >= IN_FLIGHT, `all ${IN_FLIGHT} requests to reach the upstream`);
    const sentAt = await sigterm(w);
    assert.equal(await tryConnect(w.port), 'ECONNREFUSED', 'a new connection after SIGTERM is refused');
    assert.equal(w.gw.child.exitCode, null, 'the process waits for its requests');
    w.release();
    const statuses = await Promise.all(answers);
    assert.deepEqual(
      statuses.filter((s) => s !== 200),
      [],
      'every in-flight request got its 200',
    );
    assert.equal(await w.gw.exited, 0);
    assert.ok(Date.now() - sentAt < drainTimeoutMs, 'the process exited within server.drainTimeoutMs');
    assert.match(w.gw.stdout(), /"msg":"stopped"/);
  });

  test('a second SIGTERM ends the process at once (exit 1) with requests still hanging', async () => {
    const w = await world(cleanup, { drainTimeoutMs: 60_000 });
    const agent = new Agent({ connections: 10 });
    cleanup.push(() => agent.destroy());
    const answers = flood(w, agent).slice(0, 10);
    await waitFor(() => w.upstream.hits() >= 10, 'requests to reach the upstream');
    await sigterm(w);
    w.gw.child.kill('SIGTERM');
    assert.equal(await w.gw.exited, 1);
    assert.match(w.gw.stdout(), /second signal: exiting now/);
    for (const answer of await Promise.all(answers)) assert.ok(answer instanceof Error, 'the cut requests fail on the client side');
  });

  test('the drain time-out ends the process even when the upstream never answers (exit 1: requests were cut)', async () => {
    // The upstream deadline is 60 s: only server.drainTimeoutMs can end this. The request time-outs
    // are the defaults: short ones answer a request a busy machine is slow to send with a 408.
    const w = await world(cleanup, { drainTimeoutMs: 500 });
    const agent = new Agent({ connections: 10 });
    cleanup.push(() => agent.destroy());
    const answers = flood(w, agent).slice(0, 10);
    await waitFor(() => w.upstream.hits() >= 10, 'requests to reach the upstream');
    await sigterm(w);
    const code = await Promise.race([w.gw.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 15_000))]);
    assert.equal(code, 1);
    assert.match(w.gw.stdout(), /"unfinished":10,.*"msg":"drain time-out: exiting"/);
    for (const answer of await Promise.all(answers)) assert.ok(answer instanceof Error);
  });

  test('the drain time-out with nothing left in flight is a clean exit 0', async () => {
    const w = await world(cleanup, { drainTimeoutMs: 300, headersTimeoutMs: 300, requestTimeoutMs: 1000 });
    await sigterm(w);
    assert.equal(await w.gw.exited, 0);
  });
});
