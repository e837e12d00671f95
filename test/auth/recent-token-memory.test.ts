import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client } from 'undici';
import { startFixture, type Fixture } from '../helpers/fixture.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Bytes of heap and of array buffers still in use after a full collection. */
function heldBytes(): number {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Room the recent-token table may take: an eighth of auth.tokenCacheMaxBytes (verifier.ts). */
const CACHE_BYTES = 2 * 1024 * 1024;
/** Spaces between "Bearer" and the token: RFC 6750 section 2.1 allows 1*SP, and they count towards auth.maxTokenBytes only. */
const PADDING = 60_000;

/**
 * The recent-token table keeps tokens whole, charged their characters and 64 bytes. The token a
 * request brings is V8's slice of its Authorization header: kept as is, the whole header stays
 * alive with it, however many spaces the client put after "Bearer".
 */
describe('the recent-token table in memory', () => {
  let fx: Fixture;
  let client: Client;
  before(async () => {
    fx = await startFixture({ server: { maxHeaderBytes: 131072 }, auth: { maxTokenBytes: 65536, tokenCacheMaxBytes: CACHE_BYTES } });
    client = new Client(fx.gw.url, { pipelining: 1 });
  });
  after(async () => {
    await client.close();
    await fx.close();
  });

  async function status(authorization: string): Promise<number> {
    const res = await client.request({ method: 'GET', path: '/api/customers/1', headers: { authorization } });
    await res.body.dump();
    return res.statusCode;
  }

  test('tokens sent after long runs of spaces hold no more memory than the table is charged for them', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 800; i++) tokens.push(await fx.token({ claims: { sub: `padded-${i}` } }));
    // Warm up: the first requests make what any request needs (compiled code, the connection's buffers).
    for (let i = 0; i < 5; i++) assert.equal(await status(`Bearer ${await fx.token({ claims: { sub: `warm-${i}` } })}`), 200);
    const before = heldBytes();
    const { verifier } = fx.gw.gateway;
    const recentBefore = verifier.recentBytes;
    const cachedBefore = verifier.cachedBytes;
    const spaces = ' '.repeat(PADDING);
    for (const token of tokens) assert.equal(await status(`Bearer ${spaces}${token}`), 200);
    const grown = heldBytes() - before;
    const charged = verifier.recentBytes - recentBefore + (verifier.cachedBytes - cachedBefore);
    // The table did take most of these tokens (~300 characters each, an eighth of 2 MiB is 256 KiB).
    assert.ok(verifier.recentBytes > 128 * 1024, `${verifier.recentBytes} bytes in the recent-token table`);
    // Kept whole with their headers they would hold 800 × 60 KB, ~48 MB; 4 MiB allows for the rest of the process.
    assert.ok(grown < charged + 4 * 1024 * 1024, `${grown} bytes held for ${charged} bytes charged`);
  });
});
