import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { embedOverrides } from '../helpers/embed-world.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, type HttpAnswer } from '../helpers/gateway.ts';

/** What an answer says, without what differs per exchange (its date and request id). */
function said(res: HttpAnswer): unknown {
  const { date: _date, 'x-request-id': _id, ...headers } = res.headers;
  return { status: res.status, headers, text: res.text };
}

describe('without embed, a resource that declares embeddable relations answers as before', () => {
  let plain: Fixture;
  let embedding: Fixture;

  before(async () => {
    plain = await startFixture({ auth: { ownerClaim: 'customer_id' } });
    embedding = await startFixture(embedOverrides());
  });
  after(async () => {
    await plain.close();
    await embedding.close();
  });

  test("the shipped customer's answers (item, page, orders; JSON and HAL; miss and hit; 304) are byte for byte the same", async () => {
    const claims = { claims: { scope: 'customers:read customers:read:any' } };
    const [a, b] = [await plain.token(claims), await embedding.token(claims)];
    for (const path of [
      '/api/customers/7',
      '/api/customers?offset=0&limit=5',
      '/api/customers/7/orders',
      '/api/customers/7/orders/701',
      '/api/customers/7?other=1',
    ]) {
      for (const accept of ['application/json', 'application/hal+json']) {
        for (const round of ['miss', 'hit']) {
          const before = await get(`${plain.gw.url}${path}`, { ...bearer(a), accept });
          const after = await get(`${embedding.gw.url}${path}`, { ...bearer(b), accept });
          assert.deepEqual(said(after), said(before), `${path} ${accept} ${round}`);
          const etag = before.headers['etag'];
          if (typeof etag !== 'string') continue;
          const notModified = await get(`${embedding.gw.url}${path}`, { ...bearer(b), accept, 'if-none-match': etag });
          assert.equal(notModified.status, 304, `${path} ${accept}`);
        }
      }
    }
  });
});
