import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { embedOverrides, freshEmbedWorld } from '../helpers/embed-world.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { defaultRecord } from '../helpers/upstream.ts';

type Json = Record<string, unknown>;

/** A gateway whose answers with `embed` have 150 ms, `sales` embedding customers with the policy given. */
async function start(onError: 'omit' | 'fail'): Promise<Fixture> {
  const overrides = embedOverrides({ embedding: { timeoutMs: 150 } });
  const resources = overrides['resources'] as Record<string, Record<string, unknown>>;
  (resources['sales'] as Record<string, unknown>)['embed'] = { customer: { target: 'customers', onError } };
  return startFixture(overrides);
}

for (const onError of ['omit', 'fail'] as const) {
  describe(`one deadline bounds an answer with embed (embedding.timeoutMs), onError ${onError}`, () => {
    let fx: Fixture;
    let any: string;
    let release: () => void = () => {};

    before(async () => {
      fx = await start(onError);
      any = await fx.token({ claims: { scope: 'customers:read customers:read:any' } });
    });
    beforeEach(async () => {
      await freshEmbedWorld(fx);
      // Customer 2's upstream answers only when the test is over: well past the deadline, within its own timeout.
      const until = new Promise<void>((resolve) => (release = resolve));
      fx.upstream.on('/customers/2', { kind: 'wait', until, then: { kind: 'json', body: defaultRecord(2) } });
    });
    afterEach(() => release());
    after(() => fx.close());

    test(
      onError === 'omit'
        ? 'a part not read by the deadline is left out with reason timeout; the rest is answered'
        : 'a part not read by the deadline fails the whole answer with a 504 problem',
      async () => {
        const res = await get(`${fx.gw.url}/api/sales?embed=items.customer`, bearer(any));
        if (onError === 'fail') {
          assert.equal(res.status, 504);
          assert.equal(problemOf(res).status, 504);
          return;
        }
        assert.equal(res.status, 200);
        assert.equal(res.headers['embed-status'], 'items.customer=omitted; reason=timeout');
        const items = (res.json() as { items: Json[] }).items;
        assert.equal(items[1]?.['embedded'], undefined);
        assert.equal(((items[0]?.['embedded'] as Json)['customer'] as Json)['id'], 1);
        assert.equal(((items[2]?.['embedded'] as Json)['customer'] as Json)['id'], 3);
      },
    );
  });
}
