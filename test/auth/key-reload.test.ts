import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mergeConfig } from '../../src/config/load.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { makeKey, signToken, startJwksServer } from '../helpers/keys.ts';
import { sample } from '../helpers/metrics.ts';
import { configWith } from '../../src/gateway/load-config.ts';

const verifications = async (fx: Fixture): Promise<number> =>
  sample(await fx.gw.gateway.metrics.text(), 'hypergate_token_verifications_total', { result: 'ok' }) ?? Number.NaN;

/**
 * Item 5 of the hardening issue: a reload (SIGHUP, or gateway.reload) while the JWKS fails never
 * swaps working keys for none. Here with the gateway's own reload; test/run/cli.test.ts sends
 * SIGHUP to a real process.
 */
describe('a reload while the key server fails', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture();
  });
  after(() => fx.close());

  const reload = (overrides: unknown) => fx.gw.gateway.reload(configWith(mergeConfig(fx.gw.gateway.config, overrides)));

  test('keeps the keys and the verified tokens, and says so in its result', async () => {
    const cached = await fx.token({ claims: { sub: 'cached' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(cached))).status, 200);
    const verifier = fx.gw.gateway.verifier;
    fx.jwks.setFault({ kind: 'status', status: 500 });
    try {
      const result = await reload({ log: { level: 'warn' } });
      assert.equal(result.keysKept, true);
      assert.match(
        String(result.keysKeptReason),
        new RegExp(
          `the JWKS could not be fetched from ${fx.jwks.url.replace(/[./]/g, '\\$&')} \\(HTTP 500\\): the key set fetched \\d+ s ago is kept, and so are the verified tokens`,
        ),
      );
      assert.equal(fx.gw.gateway.verifier, verifier, 'the same verifier, with its cache');
      const before = await verifications(fx);
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(cached))).status, 200);
      assert.equal(await verifications(fx), before, 'the cached token was not verified again');
      // A token never seen before is verified with the kept keys.
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: { sub: 'new' } })))).status, 200);
      assert.equal(await verifications(fx), before + 1);
    } finally {
      fx.jwks.setFault(null);
    }
  });

  test('that changes other auth settings keeps the keys, and verifies tokens again under the new settings', async () => {
    const token = await fx.token({ claims: { sub: 'rules' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    fx.jwks.setFault({ kind: 'status', status: 503 });
    try {
      const result = await reload({ auth: { clockToleranceSeconds: 1 } });
      assert.equal(result.keysKept, true);
      assert.doesNotMatch(String(result.keysKeptReason), /verified tokens/);
      assert.equal(fx.gw.gateway.verifier.cached(token), undefined, 'tokens are verified again under the new settings');
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200, 'with the kept keys');
    } finally {
      fx.jwks.setFault(null);
      await reload({ auth: { clockToleranceSeconds: 5 } });
    }
  });

  test('to another JWKS URL that cannot be fetched is refused, and the running keys and config stay', async () => {
    const other = await startJwksServer([]);
    other.setFault({ kind: 'status', status: 500 });
    try {
      const config = fx.gw.gateway.config;
      await assert.rejects(
        reload({ auth: { jwksUrl: other.url } }),
        new RegExp(`auth\\.jwksUrl: could not fetch ${other.url.replace(/[./]/g, '\\$&')}: HTTP 500`),
      );
      assert.equal(fx.gw.gateway.config, config);
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: { sub: 'stays' } })))).status, 200);
    } finally {
      await other.close();
    }
  });

  test('that fetches the keys drops the verified tokens when the keys changed, and keeps them when not', async () => {
    const token = await fx.token({ claims: { sub: 'rotation' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    const unchanged = await reload({ log: { level: 'info' } });
    assert.equal(unchanged.keysKept, undefined, 'said only when the keys were kept');
    assert.notEqual(fx.gw.gateway.verifier.cached(token), undefined, 'same keys: the token stays verified');
    const next = await makeKey('ES256');
    fx.jwks.setKeys([next.publicJwk]);
    try {
      await reload({ log: { level: 'warn' } });
      assert.equal(fx.gw.gateway.verifier.cached(token), undefined, 'its key was withdrawn: the token is not kept');
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 401);
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(await signToken(next, { nowSeconds: fx.clock.seconds })))).status, 200);
    } finally {
      fx.jwks.setKeys([fx.key.publicJwk]);
      await reload({ log: { level: 'info' } });
    }
  });
});
