import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HgError } from '../../src/lib/errors.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';
import { configWith } from '../../src/gateway/load-config.ts';

/**
 * The pool is made on the first request (undici loads then); close() must close the client all
 * the same. A reload closes the clients it no longer uses while requests of the old pipeline may
 * still be on their way to them, and shutdown closes them after the drain: what comes later is
 * refused, not sent on a pool nobody will close.
 */
describe('a closed upstream client', () => {
  let upstream: TestUpstream;
  before(async () => {
    upstream = await startTestUpstream();
  });
  after(() => upstream.close());

  test('closed before its first request, it refuses a later one without reaching the upstream', async () => {
    const client = new UpstreamClient(configWith({}).upstream, upstream.url);
    await client.close();
    await assert.rejects(
      client.getJson('/customers/1', undefined, (json) => json),
      (err: unknown) => err instanceof HgError && err.code === 'HG_ERR_UPSTREAM_BAD_GATEWAY',
    );
    assert.equal(upstream.requests.length, 0);
  });
});
