import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, type HttpAnswer } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { sample } from '../helpers/metrics.ts';

const RATE = 10;
const BURST = 20;
const USERS = 60;

// Regression: every token not yet verified was charged to the client address before the crypto,
// so behind one NAT or backend-for-frontend 60 users with fresh valid tokens got 429s, and 20 forged
// tokens from one of them locked every other user out.
describe('clients behind one address: the address pays only for failed authentication', () => {
  let fx: Fixture;
  let tokens: string[];
  before(async () => {
    fx = await startFixture({ rateLimit: { requestsPerSecond: RATE, burst: BURST } });
    tokens = await Promise.all(Array.from({ length: USERS }, (_, i) => fx.token({ claims: { sub: `nat-user-${i}` } })));
  });
  after(() => fx.close());

  const customer = (token: string): Promise<HttpAnswer> => get(`${fx.gw.url}/api/customers/1`, bearer(token));
  const verifications = async (result: string): Promise<number> =>
    sample(await fx.gw.gateway.metrics.text(), 'hypergate_token_verifications_total', { result }) ?? 0;

  test('60 users with fresh valid tokens from one address, all at once, are all served', async () => {
    const answers = await Promise.all(tokens.map(customer));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(USERS).fill(200),
    );
    assert.equal(await verifications('ok'), USERS);
  });

  test('after a burst of forged tokens from that address, its valid users are still served and its forged tokens refused before any crypto', async () => {
    // The users are served (their tokens verified) before the forgeries begin.
    assert.deepEqual(
      (await Promise.all(tokens.map(customer))).map((a) => a.status),
      Array(USERS).fill(200),
    );
    const forged = async (i: number): Promise<string> => `${(await fx.token({ claims: { sub: `forger-${i}` } })).slice(0, -6)}AAAAAA`;
    for (let i = 0; i < BURST; i++) assert.equal((await customer(await forged(i))).status, 401, `forged token ${i} is verified and fails`);
    const invalid = await verifications('invalid');
    // Over its budget: no further forged token is verified.
    for (let i = 0; i < 10; i++) assertProblem(await customer(await forged(BURST + i)), { status: 429, code: 'HG_ERR_RATE_LIMITED' });
    assert.equal(await verifications('invalid'), invalid, 'no crypto for a forged token while the address is over its budget');
    // Valid tokens never paid, so none is refused for the forgeries.
    const answers = await Promise.all(tokens.map(customer));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(USERS).fill(200),
    );
    // A new token is not verified either while the address is over its budget: its validity is unknown.
    const verified = await verifications('ok');
    assertProblem(await customer(await fx.token({ claims: { sub: 'late-comer' } })), { status: 429, code: 'HG_ERR_RATE_LIMITED' });
    assert.equal(await verifications('ok'), verified);
    // The budget refills at requestsPerSecond: the newcomer is verified and served once it has.
    fx.clock.advance(1000 / RATE);
    assert.equal((await customer(await fx.token({ claims: { sub: 'later-comer' } }))).status, 200);
  });
});
