import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { sample } from '../helpers/metrics.ts';
import { startStreamUpstream, type StreamUpstream } from '../helpers/stream-upstream.ts';
import { waitFor } from '../helpers/wait.ts';

/** Short time-outs, so a stalled upstream is seen within a test. */
function routes(filesUrl: string): unknown {
  return {
    upstreams: { files: { url: filesUrl, timeoutMs: 2000, breaker: { failures: 3, cooldownMs: 60_000 } } },
    routes: {
      stall: { path: '/api/stall', service: 'files', upstream: '/stall', timeoutMs: 200 },
      stallBody: { path: '/api/stall-body', service: 'files', upstream: '/stall-body', idleTimeoutMs: 200 },
      reset: { path: '/api/reset', service: 'files', upstream: '/reset' },
      resetMid: { path: '/api/reset-mid', service: 'files', upstream: '/reset-mid' },
      slow: { path: '/api/slow', service: 'files', upstream: '/slow', idleTimeoutMs: 1000 },
      broken: { path: '/api/broken', service: 'files', upstream: '/status/500' },
    },
  };
}

/** Reads an answer's body to its end, or to the error that cut it. */
async function readToEnd(res: Awaited<ReturnType<typeof request>>): Promise<{ bytes: number; error: Error | null }> {
  let bytes = 0;
  try {
    for await (const chunk of res.body) bytes += (chunk as Buffer).length;
    return { bytes, error: null };
  } catch (err) {
    return { bytes, error: err as Error };
  }
}

describe('a pass-through route whose upstream fails', () => {
  let fx: Fixture;
  let files: StreamUpstream;
  let token: string;

  before(async () => {
    files = await startStreamUpstream();
    fx = await startFixture(routes(files.url));
    token = await fx.token();
  });
  after(async () => {
    await fx.close();
    await files.close();
  });

  test('an upstream that sends no head within timeoutMs is a 504 problem', async () => {
    const res = await get(`${fx.gw.url}/api/stall`, bearer(token));
    assert.equal(res.status, 504);
    assert.equal((res.json() as { code: string }).code, 'HG_ERR_UPSTREAM_TIMEOUT');
    assert.match((res.json() as { detail: string }).detail, /200 ms/);
    await waitFor(() => files.aborted.count >= 1, 'the stalled upstream request is cut');
  });

  test('an upstream that resets before its head is a 502 problem', async () => {
    const res = await get(`${fx.gw.url}/api/reset`, bearer(token));
    assert.equal(res.status, 502);
    assert.equal((res.json() as { code: string }).code, 'HG_ERR_UPSTREAM_BAD_GATEWAY');
  });

  test("an upstream that resets mid-body cuts the client's connection after the status, and the cut is counted", async () => {
    const res = await request(`${fx.gw.url}/api/reset-mid`, { headers: bearer(token) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-length'], '1000000');
    const read = await readToEnd(res);
    assert.ok(read.error !== null, 'the body does not end as if whole');
    assert.ok(read.bytes < 1_000_000);
    // Counted before the connection is cut, so before the client saw the cut.
    assert.equal(sample(await fx.gw.gateway.metrics.text(), 'hypergate_passthrough_cut_total', { route: '/api/reset-mid', reason: 'upstream_lost' }), 1);
  });

  test('an upstream that stops sending mid-body is cut after idleTimeoutMs', async () => {
    const res = await request(`${fx.gw.url}/api/stall-body`, { headers: bearer(token) });
    assert.equal(res.statusCode, 200);
    const read = await readToEnd(res);
    assert.equal(read.bytes, 'begun'.length);
    assert.ok(read.error !== null, 'a chunked body without its last chunk is no whole body');
    assert.equal(sample(await fx.gw.gateway.metrics.text(), 'hypergate_passthrough_cut_total', { route: '/api/stall-body', reason: 'upstream_idle' }), 1);
  });

  test('an upstream that answers slowly, but within its idle time between chunks, is streamed whole', async () => {
    const res = await get(`${fx.gw.url}/api/slow`, bearer(token));
    assert.equal(res.status, 200);
    assert.equal(res.text, 'chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n');
  });

  test("upstream 5xx answers pass as they are and count against the service's breaker, which then answers 503 at once", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await get(`${fx.gw.url}/api/broken`, bearer(token));
      assert.equal(res.status, 500);
      assert.equal(res.text, 'oops');
    }
    const seen = files.seen.length;
    const refused = await get(`${fx.gw.url}/api/broken`, bearer(token));
    assert.equal(refused.status, 503);
    assert.equal((refused.json() as { code: string }).code, 'HG_ERR_UPSTREAM_UNAVAILABLE');
    assert.match(String(refused.headers['retry-after']), /^\d+$/);
    assert.equal(files.seen.length, seen, 'nothing was sent');
    const text = await fx.gw.gateway.metrics.text();
    assert.equal(sample(text, 'hypergate_upstream_requests_total', { service: 'files', outcome: 'rejected' }), 1);
    assert.equal(sample(text, 'hypergate_upstream_breaker_state', { service: 'files' }), 2);
  });
});
