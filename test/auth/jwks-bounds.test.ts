import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { JWK } from 'jose';
import { MAX_JWKS_KEYS } from '../../src/auth/key-index.ts';
import { ManualClock } from '../helpers/clock.ts';
import { bearer, get, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { captureLog, type CapturedLog } from '../helpers/log.ts';
import { sample } from '../helpers/metrics.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Item 8 of the hardening issue: what a key server answers is bounded, in bytes
 * (auth.jwksMaxBytes, cut while it streams) and in keys (MAX_JWKS_KEYS).
 */
describe('bounds on what the key server answers', () => {
  let key: TestKey;
  let upstream: TestUpstream;
  const running: Array<{ close(): Promise<void> }> = [];
  before(async () => {
    key = await makeKey('ES256', 'the-real-one');
    upstream = await startTestUpstream();
  });
  after(async () => {
    for (const r of running.reverse()) await r.close();
    await upstream.close();
  });

  async function world(keys: readonly JWK[], auth: Record<string, unknown> = {}): Promise<{ jwks: JwksServer; gw: RunningGateway; log: CapturedLog }> {
    const jwks = await startJwksServer(keys);
    running.push(jwks);
    return { jwks, ...(await gatewayOn(jwks, auth)) };
  }

  async function gatewayOn(jwks: JwksServer, auth: Record<string, unknown> = {}): Promise<{ gw: RunningGateway; log: CapturedLog }> {
    const log = captureLog();
    const gw = await startGateway({ upstream: { url: upstream.url }, auth: { jwksUrl: jwks.url, ...auth } }, { clock: new ManualClock(), logger: log.logger });
    running.push(gw);
    return { gw, log };
  }

  test('an endless key list is cut at auth.jwksMaxBytes while it streams: 503, and the gateway closes the connection', async () => {
    const jwks = await startJwksServer([key.publicJwk]);
    running.push(jwks);
    jwks.setFault({ kind: 'endless' });
    const { gw, log } = await gatewayOn(jwks, { jwksMaxBytes: 256 * 1024 });
    await waitFor(() => jwks.endless.cut === 1, 'the server to see its endless answer cut short by the gateway');
    assert.ok(jwks.endless.written < 64 * 1024 * 1024, `${jwks.endless.written} bytes written before the cut`);
    assertProblem(await get(`${gw.url}/api/customers/1`, bearer(await signToken(key))), { status: 503, code: 'HG_ERR_AUTH_KEYS_UNAVAILABLE' });
    assert.equal(sample(await gw.gateway.metrics.text(), 'hypergate_jwks_fetches_total', { result: 'too_large' }), 1);
    assert.ok(log.records().some((r) => r['event'] === 'jwks' && /larger than 262144 bytes \(auth\.jwksMaxBytes\)/.test(String(r['cause']))));
  });

  test(`a key set of more than ${MAX_JWKS_KEYS} keys is refused whole, and the last good set stays in use`, async () => {
    const { jwks, gw, log } = await world([key.publicJwk], { jwksCooldownMs: 0 });
    const others = await Promise.all(Array.from({ length: MAX_JWKS_KEYS }, (_, i) => makeKey('ES256', `other-${i}`)));
    const rotated = others[0] as TestKey;
    jwks.setKeys([key.publicJwk, ...others.map((k) => k.publicJwk)]);
    // The rotated key's kid is unknown: the refetch brings 101 keys, refused.
    assertProblem(await get(`${gw.url}/api/customers/1`, bearer(await signToken(rotated))), { status: 503, code: 'HG_ERR_AUTH_KEYS_UNAVAILABLE' });
    assert.ok(log.records().some((r) => r['result'] === 'too_many_keys' && /101 keys, more than the 100 accepted/.test(String(r['cause']))));
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(key, { claims: { sub: 'still' } })))).status, 200);
  });

  test(`a set of ${MAX_JWKS_KEYS} keys is taken, and a token finds its key by kid wherever it stands in the set`, async () => {
    const others = await Promise.all(Array.from({ length: MAX_JWKS_KEYS - 1 }, (_, i) => makeKey('ES256', `k-${i}`)));
    const { gw } = await world([...others.map((k) => k.publicJwk), key.publicJwk]);
    assert.equal(gw.gateway.keySource.remote?.loaded, true);
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(key)))).status, 200);
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(others[0] as TestKey)))).status, 200);
  });
});
