import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { makeKey, signToken } from '../helpers/keys.ts';
import { sample } from '../helpers/metrics.ts';
import { waitFor } from '../helpers/wait.ts';

const CONCURRENT = 50;

/**
 * Issue 13 (footprint): concurrent requests bearing the same new token verify it once. To be sure
 * they are concurrent, the token is signed by a key the gateway does not have yet: the first
 * request makes the gateway fetch the JWKS, which the test holds until every request has arrived.
 */
describe('concurrent requests with one new token', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ auth: { jwksCooldownMs: 0 } });
  });
  after(() => fx.close());

  const counts = async (): Promise<{ ok: number; invalid: number }> => {
    const text = await fx.gw.gateway.metrics.text();
    return {
      ok: sample(text, 'hypergate_token_verifications_total', { result: 'ok' }) ?? 0,
      invalid: sample(text, 'hypergate_token_verifications_total', { result: 'invalid' }) ?? 0,
    };
  };

  /** CONCURRENT requests with `token`, all in the gateway before the key set they wait for arrives. */
  async function together(token: string): Promise<number[]> {
    const held = fx.jwks.hold();
    const answers = Array.from({ length: CONCURRENT }, () => get(`${fx.gw.url}/api/customers/1`, bearer(token)));
    await waitFor(() => fx.gw.gateway.metrics.inFlight === CONCURRENT, `${CONCURRENT} requests in flight`);
    held.release();
    return (await Promise.all(answers)).map((a) => a.status);
  }

  test('a valid one is verified once and cached', async () => {
    const rotated = await makeKey('ES256', 'rotated-valid');
    fx.jwks.setKeys([fx.key.publicJwk, rotated.publicJwk]);
    const before = await counts();
    const statuses = await together(await signToken(rotated, { nowSeconds: fx.clock.seconds }));
    assert.deepEqual(new Set(statuses), new Set([200]));
    assert.equal((await counts()).ok, before.ok + 1);
  });

  test('a forged one fails once for all of them, and the failure is not kept: the next request verifies again', async () => {
    const rotated = await makeKey('ES256', 'rotated-forged');
    fx.jwks.setKeys([fx.key.publicJwk, rotated.publicJwk]);
    const forged = `${(await signToken(rotated, { nowSeconds: fx.clock.seconds })).slice(0, -6)}AAAAAA`;
    const before = await counts();
    assert.deepEqual(new Set(await together(forged)), new Set([401]));
    assert.equal((await counts()).invalid, before.invalid + 1);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(forged))).status, 401);
    assert.equal((await counts()).invalid, before.invalid + 2);
  });
});
