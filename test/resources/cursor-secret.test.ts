import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { startStripeLike, type ShapedApi } from '../helpers/shaped-apis.ts';

const CUSTOMERS = Array.from({ length: 9 }, (_, i) => ({ id: `cus_${i + 1}`, email: `c${i + 1}@example.com`, created: i }));

function config(stripe: string, cursorSecret: string | null): unknown {
  return {
    upstreams: { stripe: { url: stripe } },
    paging: { cursorSecret },
    resources: {
      payers: {
        path: '/api/payers/{id}',
        params: { id: 'string' },
        upstream: '/v1/customers/{id}',
        service: 'stripe',
        fields: ['id'],
        collection: {
          path: '/api/payers',
          upstream: '/v1/customers',
          items: '/data',
          paging: { style: 'cursor', cursorParam: 'starting_after', hasMore: '/has_more', lastKey: 'id', defaultLimit: 4 },
        },
      },
    },
  };
}

describe('the key that seals cursors (paging.cursorSecret)', () => {
  let stripe: ShapedApi;
  const fixtures: Fixture[] = [];
  const secret = 'a shared secret of at least thirty-two bytes';

  before(async () => {
    stripe = await startStripeLike(CUSTOMERS);
    fixtures.push(await startFixture(config(stripe.url, secret)), await startFixture(config(stripe.url, secret)), await startFixture(config(stripe.url, null)));
  });
  after(async () => {
    for (const fx of fixtures) await fx.close();
    await stripe.close();
  });

  test("instances that share the secret open each other's cursors; one with its own key refuses them before forwarding", async () => {
    const [a, b, alone] = fixtures as [Fixture, Fixture, Fixture];
    const first = await get(`${a.gw.url}/api/payers`, bearer(await a.token()));
    const next = (first.json() as { links: { next: string } }).links.next;
    const atB = await get(`${b.gw.url}${next}`, bearer(await b.token()));
    assert.equal(atB.status, 200);
    assert.deepEqual(
      (atB.json() as { items: { id: string }[] }).items.map((i) => i.id),
      ['cus_5', 'cus_6', 'cus_7', 'cus_8'],
    );
    const seen = stripe.seen.length;
    const atAlone = await get(`${alone.gw.url}${next}`, bearer(await alone.token()));
    assert.equal(atAlone.status, 400);
    assert.match(problemOf(atAlone).detail, /"cursor"/);
    assert.equal(stripe.seen.length, seen);
  });
});
