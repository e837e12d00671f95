import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/observability/logger.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { captureLog } from '../helpers/log.ts';

describe('access log', () => {
  let fx: Fixture;
  const log = captureLog('debug');
  before(async () => {
    fx = await startFixture({}, { logger: log.logger });
  });
  after(() => fx.close());

  it('writes one JSON line per request with id, method, path, status, bytes, latencies, cache outcome and subject', async () => {
    const auth = bearer(await fx.token({ claims: { sub: 'alice' } }));
    const miss = await get(`${fx.gw.url}/api/customers/5?x=1`, { ...auth, 'x-request-id': 'req-miss-1' });
    const hit = await get(`${fx.gw.url}/api/customers/5`, auth);
    const access = log.records().filter((r) => r['msg'] === 'request');
    assert.equal(access.length, 2);
    const [first, second] = access as [Record<string, unknown>, Record<string, unknown>];
    assert.equal(first['reqId'], 'req-miss-1');
    assert.equal(first['method'], 'GET');
    assert.equal(first['path'], '/api/customers/5');
    assert.equal(first['status'], 200);
    assert.equal(first['bytes'], Buffer.byteLength(miss.text));
    assert.equal(first['cache'], 'miss');
    assert.equal(first['sub'], 'alice');
    assert.equal(typeof first['ms'], 'number');
    assert.equal(typeof first['upstreamMs'], 'number');
    assert.equal(second['reqId'], hit.headers['x-request-id']);
    assert.equal(second['cache'], 'hit');
    assert.equal(second['upstreamMs'], undefined);
  });

  it('gives no upstreamMs for the API root, which the gateway makes itself', async () => {
    const auth = bearer(await fx.token());
    assert.equal((await get(`${fx.gw.url}/api`, { ...auth, 'x-request-id': 'req-root-1' })).status, 200);
    const line = log.records().find((r) => r['msg'] === 'request' && r['reqId'] === 'req-root-1');
    assert.ok(line);
    assert.equal(line['cache'], 'miss');
    assert.equal(line['upstreamMs'], undefined);
  });

  it('writes the query apart from the path, the client address, the user agent, and no worker in a single process', async () => {
    await get(`${fx.gw.url}/api/customers?offset=5&limit=2`, {
      ...bearer(await fx.token()),
      'user-agent': 'hypergate-test/1.0 (fields)',
      'x-request-id': 'req-fields',
    });
    const line = log.records().find((r) => r['msg'] === 'request' && r['reqId'] === 'req-fields');
    assert.ok(line, 'an access line');
    assert.equal(line['path'], '/api/customers');
    assert.equal(line['query'], 'offset=5&limit=2');
    assert.equal(line['client'], '127.0.0.1');
    assert.equal(line['userAgent'], 'hypergate-test/1.0 (fields)');
    assert.equal('worker' in line, false);
  });

  it('logs every 5xx with its cause and request id', async () => {
    fx.upstream.on('/customers/66', { kind: 'json', status: 500, body: { boom: true } });
    const res = await get(`${fx.gw.url}/api/customers/66`, { ...bearer(await fx.token()), 'x-request-id': 'req-5xx' });
    assert.equal(res.status, 502);
    const failure = log.records().find((r) => r['msg'] === 'request failed' && r['reqId'] === 'req-5xx');
    assert.ok(failure, 'a "request failed" line');
    assert.equal(failure['level'], 50);
    assert.equal(failure['code'], 'HG_ERR_UPSTREAM_BAD_GATEWAY');
    assert.equal(failure['status'], 502);
    const access = log.records().find((r) => r['msg'] === 'request' && r['reqId'] === 'req-5xx');
    assert.equal(access?.['status'], 502);
  });

  it('logs what went wrong in a 5xx without an exception behind it (the upstream status, the missing field), never "undefined"', async () => {
    fx.upstream.on('/customers/68', { kind: 'json', status: 503, body: {} });
    fx.upstream.on('/customers/69', { kind: 'json', body: { id: 69, status: 'active' } });
    const auth = bearer(await fx.token());
    assert.equal((await get(`${fx.gw.url}/api/customers/68`, { ...auth, 'x-request-id': 'req-status' })).status, 502);
    assert.equal((await get(`${fx.gw.url}/api/customers/69`, { ...auth, 'x-request-id': 'req-field' })).status, 502);
    const failure = (reqId: string): Record<string, unknown> | undefined => log.records().find((r) => r['msg'] === 'request failed' && r['reqId'] === reqId);
    assert.match(String(failure('req-status')?.['detail']), /status 503/);
    assert.match(String(failure('req-field')?.['detail']), /name is missing/);
    for (const reqId of ['req-status', 'req-field']) {
      const line = log.lines.find((l) => l.includes(`"reqId":"${reqId}"`) && l.includes('request failed'));
      assert.equal(line?.includes('undefined'), false, line);
    }
  });

  it('never writes a token or an Authorization value, whatever the request', async () => {
    const good = await fx.token({ claims: { sub: 'bob' } });
    const expired = await fx.token({ expiresIn: -3600 });
    const wrongScope = await fx.token({ claims: { scope: 'other' } });
    fx.upstream.on('/customers/67', { kind: 'reset' });
    const sent = [
      bearer(good),
      bearer(expired),
      bearer(wrongScope),
      bearer('not.a.jwt'),
      { authorization: `Basic ${Buffer.from('user:hunter2').toString('base64')}` },
      { authorization: `Bearer ${good}`, 'x-request-id': good.slice(0, 100) },
    ];
    for (const headers of sent) {
      await get(`${fx.gw.url}/api/customers/8`, headers);
      await get(`${fx.gw.url}/api/customers/67`, headers);
    }
    const all = log.lines.join('');
    for (const secret of [good, expired, wrongScope, 'not.a.jwt', 'hunter2', Buffer.from('user:hunter2').toString('base64')]) {
      assert.equal(all.includes(secret), false, `a log line contains ${secret.slice(0, 12)}…`);
    }
    for (const jwt of [good, expired, wrongScope]) {
      for (const part of jwt.split('.')) assert.equal(all.includes(part), false, 'a log line contains a part of a token');
    }
    assert.equal(/bearer /i.test(all), false);
  });

  it('redacts authorization and token fields even if a caller logs them', () => {
    const { logger, lines } = captureLog();
    logger.info('careless', { authorization: 'Bearer abc.def.ghi', token: 'abc.def.ghi' });
    assert.equal(lines.join('').includes('abc.def.ghi'), false);
  });
});

describe('log settings', () => {
  it('writes no access lines when log.access is false, but still logs errors', async () => {
    const log = captureLog();
    const fx = await startFixture({ log: { access: false } }, { logger: log.logger });
    try {
      await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token()));
      fx.upstream.on('/customers/2', { kind: 'json', status: 503, body: {} });
      await get(`${fx.gw.url}/api/customers/2`, bearer(await fx.token()));
      assert.equal(log.records().filter((r) => r['msg'] === 'request').length, 0);
      assert.equal(log.records().filter((r) => r['msg'] === 'request failed').length, 1);
    } finally {
      await fx.close();
    }
  });

  it('honours log.level and can change it at run time', () => {
    const { logger, records } = captureLog();
    const quiet = createLogger('warn', () => {});
    quiet.info('ignored');
    logger.debug('hidden');
    logger.info('shown', { n: 1 });
    logger.setLevel?.('error');
    logger.warn('hidden too');
    logger.error('shown too');
    assert.deepEqual(
      records().map((r) => r['msg']),
      ['shown', 'shown too'],
    );
    assert.equal(records()[0]?.['n'], 1);
  });
});
