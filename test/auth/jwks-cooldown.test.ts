import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../helpers/clock.ts';
import { bearer, get, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { makeKey, signToken, startJwksServer, type JwksFault, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { captureLog, type CapturedLog } from '../helpers/log.ts';
import { sample } from '../helpers/metrics.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const COOLDOWN_MS = 30_000;

/**
 * Item 7 of the hardening issue: at most one JWKS fetch per auth.jwksCooldownMs whatever arrives
 * (keys missing, unknown kids, old keys), and the last good key set stays in use while the key
 * server is down, however long. Time is the gateway's injected clock.
 */
describe('the JWKS cooldown and the last good key set', () => {
  let key: TestKey;
  let upstream: TestUpstream;
  const running: Array<{ close(): Promise<void> }> = [];
  before(async () => {
    key = await makeKey('ES256', 'in-use');
    upstream = await startTestUpstream();
  });
  after(async () => {
    for (const r of running.reverse()) await r.close();
    await upstream.close();
  });

  /** A JWKS server (failing from the start with `fault`) and a gateway using it. */
  async function world(
    options: { fault?: JwksFault; admin?: boolean } = {},
  ): Promise<{ jwks: JwksServer; gw: RunningGateway; clock: ManualClock; log: CapturedLog }> {
    const jwks = await startJwksServer([key.publicJwk]);
    jwks.setFault(options.fault ?? null);
    running.push(jwks);
    const clock = new ManualClock();
    const log = captureLog();
    const gw = await startGateway(
      { upstream: { url: upstream.url }, auth: { jwksUrl: jwks.url, jwksCooldownMs: COOLDOWN_MS }, ...(options.admin ? { admin: { port: 0 } } : {}) },
      { clock, logger: log.logger },
    );
    running.push(gw);
    return { jwks, gw, clock, log };
  }

  /** `count` requests, `concurrency` at a time, each with a token made by `token(i)`; the statuses seen. */
  async function flood(gw: RunningGateway, count: number, token: (i: number) => Promise<string>, concurrency = 50): Promise<Set<number>> {
    const statuses = new Set<number>();
    for (let start = 0; start < count; start += concurrency) {
      const batch = await Promise.all(
        Array.from(
          { length: Math.min(concurrency, count - start) },
          async (_, j) => (await get(`${gw.url}/api/customers/1`, bearer(await token(start + j)))).status,
        ),
      );
      for (const s of batch) statuses.add(s);
    }
    return statuses;
  }

  test('with the keys missing, 2000 tokens make no fetch within the cooldown, and one burst after it makes exactly one', async () => {
    const { jwks, gw, clock } = await world({ fault: { kind: 'status', status: 500 } });
    assert.equal(jwks.fetches(), 1, 'the start-up fetch');
    const token = await signToken(key, { nowSeconds: clock.seconds });
    const forgers = await makeKey('ES256', 'unknown-kid');
    const forged = (i: number): Promise<string> => signToken(forgers, { nowSeconds: clock.seconds, claims: { sub: `f${i}` } });
    assert.deepEqual(await flood(gw, 2000, async (i) => (i % 2 === 0 ? token : forged(i))), new Set([503]));
    assert.equal(jwks.fetches(), 1, 'no fetch within the cooldown');
    clock.advance(COOLDOWN_MS);
    jwks.setFault(null);
    assert.deepEqual(await flood(gw, 200, async () => token, 200), new Set([200]));
    assert.equal(jwks.fetches(), 2, 'one fetch for the whole burst');
  });

  test('an unknown kid within the cooldown is simply unknown (401, no fetch); after it, one fetch picks up a rotated key', async () => {
    const { jwks, gw, clock } = await world();
    const rotated = await makeKey('ES256', 'rotated');
    jwks.setKeys([key.publicJwk, rotated.publicJwk]);
    const before = jwks.fetches();
    assert.deepEqual(await flood(gw, 200, (i) => signToken(rotated, { nowSeconds: clock.seconds, claims: { sub: `r${i}` } })), new Set([401]));
    assert.equal(jwks.fetches(), before);
    clock.advance(COOLDOWN_MS);
    assert.deepEqual(await flood(gw, 100, (i) => signToken(rotated, { nowSeconds: clock.seconds, claims: { sub: `s${i}` } }), 100), new Set([200]));
    assert.equal(jwks.fetches(), before + 1);
  });

  test('the last good key set stays in use while refreshes fail, long past its 10 minutes, with one fetch per cooldown; /readyz stays ready and the log and /metrics say it is stale', async () => {
    const { jwks, gw, clock, log } = await world({ admin: true });
    jwks.setFault({ kind: 'status', status: 500 });
    const before = jwks.fetches();
    // An hour of outage, a fresh token every 10 s of it: each is verified with the kept keys.
    for (let minute = 0; minute < 60; minute++) {
      for (let step = 0; step < 6; step++) {
        clock.advance(10_000);
        const fresh = await signToken(key, { nowSeconds: clock.seconds, claims: { sub: `m${minute}-${step}` } });
        assert.equal((await get(`${gw.url}/api/customers/1`, bearer(fresh))).status, 200, `minute ${minute}`);
        // A refresh runs in the background: let it end before the clock moves on.
        await gw.gateway.keySource.remote?.whenIdle();
      }
    }
    // Refreshes start once the set is 10 minutes old (at 600 s), then one per 30 s cooldown: 600, 630, ..., 3600 s.
    const fetched = jwks.fetches() - before;
    assert.equal(fetched, 101);
    assert.equal((await get(`${gw.adminUrl}/readyz`)).status, 200);
    const stale = log.records().filter((r) => r['event'] === 'jwks' && r['stale'] === true);
    assert.equal(stale.length, fetched, 'a warning for each failed refresh');
    assert.match(String(stale.at(-1)?.['msg']), /could not refresh the JWKS from .*: HTTP 500; the key set fetched 3600 s ago stays in use \(stale/);
    const metrics = (await get(`${gw.adminUrl}/metrics`)).text;
    assert.equal(sample(metrics, 'hypergate_jwks_age_seconds'), 3600);
    assert.equal(sample(metrics, 'hypergate_jwks_fetches_total', { result: 'http_status' }), fetched);
    assert.equal(sample(metrics, 'hypergate_jwks_fetches_total', { result: 'ok' }), 1);
    // The key server is back: the next refresh replaces the set, and its age starts again.
    jwks.setFault(null);
    clock.advance(COOLDOWN_MS);
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(key, { nowSeconds: clock.seconds, claims: { sub: 'back' } })))).status, 200);
    await gw.gateway.keySource.remote?.whenIdle();
    assert.equal(gw.gateway.keySource.remote?.failure, null);
    assert.equal(sample(await gw.gateway.metrics.text(), 'hypergate_jwks_age_seconds'), 0);
  });
});
