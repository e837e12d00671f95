import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer } from '../helpers/gateway.ts';
import { fileByte, startStreamUpstream, type StreamUpstream } from '../helpers/stream-upstream.ts';

const SIZE = 200 * 1024 * 1024;
/** Generous: a gateway that buffered the body would grow by the body's size, 200 MiB. */
const MAX_GROWTH = 100 * 1024 * 1024;

describe('a large download through a pass-through route', () => {
  let fx: Fixture;
  let files: StreamUpstream;

  before(async () => {
    files = await startStreamUpstream();
    fx = await startFixture({
      upstreams: { files: { url: files.url } },
      routes: { files: { path: '/api/files/{path*}', service: 'files', upstream: '/files/{path*}' } },
    });
  });
  after(async () => {
    await fx.close();
    await files.close();
  });

  test('200 MiB generated on the fly arrive whole while this process (upstream, gateway and client) grows by a few MiB, not by the body', async () => {
    const token = await fx.token();
    // Warm up: pools, parsers and the JIT take their memory before the measure starts.
    await (
      await request(`${fx.gw.url}/api/files/warm.bin?bytes=${4 * 1024 * 1024}`, { headers: bearer(token) })
    ).body.dump({ limit: Number.POSITIVE_INFINITY });
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 25);
    const startedMs = performance.now();
    const res = await request(`${fx.gw.url}/api/files/big.bin?bytes=${SIZE}`, { headers: bearer(token) });
    assert.equal(res.statusCode, 200);
    let bytes = 0;
    let intact = true;
    for await (const chunk of res.body) {
      const buffer = chunk as Buffer;
      // Spot checks: the first byte of every chunk is where the file says it is.
      if (buffer[0] !== fileByte(bytes)) intact = false;
      bytes += buffer.length;
    }
    const seconds = (performance.now() - startedMs) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    assert.equal(bytes, SIZE);
    assert.ok(intact);
    const growth = peak - baseline;
    // For the record (a loaded machine's figures): throughput and peak growth.
    process.stdout.write(
      `# large download: ${(SIZE / 1024 / 1024 / seconds).toFixed(0)} MiB/s, peak RSS growth ${(growth / 1024 / 1024).toFixed(1)} MiB (baseline ${(baseline / 1024 / 1024).toFixed(0)} MiB)\n`,
    );
    assert.ok(growth < MAX_GROWTH, `RSS grew by ${(growth / 1024 / 1024).toFixed(1)} MiB`);
  });
});
