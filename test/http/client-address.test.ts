import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { configProblems } from '../helpers/config.ts';
import { get } from '../helpers/gateway.ts';
import { captureLog, type CapturedLog } from '../helpers/log.ts';
import { trustedRule } from '../../src/protocol/client-address.ts';

/** The client address the access line of one request (by its X-Request-Id) names. */
async function clientOf(fx: Fixture, log: CapturedLog, forwardedFor: string | undefined, id: string): Promise<unknown> {
  const headers: Record<string, string> = { 'x-request-id': id };
  if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
  await get(`${fx.gw.url}/nowhere`, headers);
  return log.records().find((r) => r['msg'] === 'request' && r['reqId'] === id)?.['client'];
}

describe('the client address without server.trustProxy (the default)', () => {
  const log = captureLog();
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({}, { logger: log.logger });
  });
  after(() => fx.close());

  test('is the connection peer, whatever X-Forwarded-For says', async () => {
    assert.equal(await clientOf(fx, log, '203.0.113.7', 'none-1'), '127.0.0.1');
    assert.equal(await clientOf(fx, log, undefined, 'none-2'), '127.0.0.1');
  });
});

describe('the client address behind a trusted proxy (server.trustProxy)', () => {
  const log = captureLog();
  let fx: Fixture;
  before(async () => {
    // The test client connects from 127.0.0.1: it plays the proxy. 10.0.0.0/8 are further proxies.
    fx = await startFixture({ server: { trustProxy: ['127.0.0.1', '10.0.0.0/8', 'fd00::/8'] } }, { logger: log.logger });
  });
  after(() => fx.close());

  test('is the rightmost X-Forwarded-For hop that is not a trusted proxy', async () => {
    assert.equal(await clientOf(fx, log, '198.51.100.1, 203.0.113.7, 10.1.2.3', 'trust-1'), '203.0.113.7');
    assert.equal(await clientOf(fx, log, '203.0.113.7', 'trust-2'), '203.0.113.7');
    assert.equal(await clientOf(fx, log, '2001:db8::1, fd00::2', 'trust-3'), '2001:db8::1');
  });

  test('never believes a hop left of the first untrusted one (a client can write those)', async () => {
    assert.equal(await clientOf(fx, log, '10.9.9.9, 203.0.113.7', 'forged-1'), '203.0.113.7');
  });

  test('stops at the nearest trusted hop when an entry is not an address, and is the leftmost hop when all are trusted', async () => {
    assert.equal(await clientOf(fx, log, 'unknown, 10.0.0.5', 'garbage-1'), '10.0.0.5');
    assert.equal(await clientOf(fx, log, '203.0.113.7:4711, 10.0.0.5', 'garbage-2'), '10.0.0.5');
    assert.equal(await clientOf(fx, log, '10.0.0.6, 10.0.0.5', 'all-trusted'), '10.0.0.6');
  });

  test('is the peer when the request has no X-Forwarded-For', async () => {
    assert.equal(await clientOf(fx, log, undefined, 'no-header'), '127.0.0.1');
  });
});

describe('the client address with a peer that is not a trusted proxy', () => {
  const log = captureLog();
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ server: { trustProxy: ['10.0.0.1'] } }, { logger: log.logger });
  });
  after(() => fx.close());

  test('is the peer: its X-Forwarded-For is ignored', async () => {
    assert.equal(await clientOf(fx, log, '203.0.113.7', 'untrusted-peer'), '127.0.0.1');
  });
});

describe('rate limits behind a trusted proxy', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ server: { trustProxy: ['127.0.0.1'] }, rateLimit: { requestsPerSecond: 1, burst: 1 } });
  });
  after(() => fx.close());

  test('count requests without a valid token against the client address the access log shows, not the proxy', async () => {
    const from = (address: string) => get(`${fx.gw.url}/api/customers/1`, { 'x-forwarded-for': address });
    assert.equal((await from('203.0.113.7')).status, 401);
    assert.equal((await from('203.0.113.7')).status, 429, 'the second failed attempt of one client is over its limit');
    assert.equal((await from('198.51.100.1')).status, 401, 'another client behind the same proxy has a bucket of its own');
  });
});

describe('server.trustProxy validation', () => {
  test('accepts addresses and CIDR ranges, and names the key for anything else', () => {
    assert.deepEqual(configProblems({ server: { trustProxy: ['10.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', '0.0.0.0/0'] } }), []);
    for (const bad of ['localhost', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/1', '10.0.0.0/', '10.0.0.0/x', '']) {
      const problems = configProblems({ server: { trustProxy: [bad] } });
      assert.ok(
        problems.some((p) => p.startsWith('server.trustProxy')),
        `${JSON.stringify(bad)}: ${problems.join('; ')}`,
      );
    }
  });
});

test('a trusted-proxy rule answers an address asked again as it did the first time, past its memo too', () => {
  const trusted = trustedRule(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
  const cases: [string, boolean][] = [
    ['127.0.0.1', true],
    ['127.0.0.2', false],
    ['10.200.3.4', true],
    ['11.0.0.1', false],
    ['fd00::1', true],
    ['fe80::1', false],
  ];
  for (let round = 0; round < 3; round++) for (const [address, answer] of cases) assert.equal(trusted(address), answer, `${address}, round ${round}`);
  // More distinct addresses than the memo keeps: it starts over, and the answers stay the same.
  for (let i = 0; i < 5000; i++) assert.equal(trusted(`10.0.${i >> 8}.${i & 255}`), true);
  for (const [address, answer] of cases) assert.equal(trusted(address), answer, address);
});
