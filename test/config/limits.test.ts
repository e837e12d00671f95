import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { problemsOf } from '../helpers/config.ts';
import { configWith, loadConfig } from '../../src/gateway/load-config.ts';

describe('limit keys', () => {
  test('server.maxHeaderCount defaults to 100 and is range-checked', () => {
    assert.equal(configWith({}).server.maxHeaderCount, 100);
    assert.deepEqual(
      problemsOf(() => configWith({ server: { maxHeaderCount: 2 } })),
      ['server.maxHeaderCount: expected an integer from 8 to 10000, got 2'],
    );
  });

  test('server.maxBodyDepth defaults to 64 and may not exceed the 1000 levels the gateway renders', () => {
    assert.equal(configWith({}).server.maxBodyDepth, 64);
    assert.deepEqual(
      problemsOf(() => configWith({ server: { maxBodyDepth: 1001 } })),
      ['server.maxBodyDepth: expected an integer from 1 to 1000, got 1001'],
    );
    assert.equal(loadConfig({ env: { HYPERGATE_SERVER_MAX_BODY_DEPTH: '8' } }).server.maxBodyDepth, 8);
  });

  test('a head time-out longer than the whole-request time-out is refused at load, not by node:http at start', () => {
    assert.deepEqual(
      problemsOf(() => configWith({ server: { headersTimeoutMs: 5000, requestTimeoutMs: 1000 } })),
      ['server.headersTimeoutMs: must not exceed server.requestTimeoutMs (1000), got 5000'],
    );
  });

  test('rateLimit is off by default, and its keys are range-checked', () => {
    assert.deepEqual(configWith({}).rateLimit, { requestsPerSecond: null, burst: 20, maxKeys: 100000, scope: null, defaultPlan: null, anonymousPlan: null });
    assert.deepEqual([...problemsOf(() => configWith({ rateLimit: { requestsPerSecond: -1, burst: 0, maxKeys: 0 } }))].sort(), [
      'rateLimit.burst: expected an integer from 1 to 1000000, got 0',
      'rateLimit.maxKeys: expected an integer from 1 to 10000000, got 0',
      'rateLimit.requestsPerSecond: expected an integer from 0 to 1000000 or null, got -1',
    ]);
  });

  test('rateLimit keys have environment variables', () => {
    const config = loadConfig({
      env: { HYPERGATE_RATE_LIMIT_REQUESTS_PER_SECOND: '50', HYPERGATE_RATE_LIMIT_BURST: '100', HYPERGATE_SERVER_MAX_HEADER_COUNT: '64' },
    });
    assert.equal(config.rateLimit.requestsPerSecond, 50);
    assert.equal(config.rateLimit.burst, 100);
    assert.equal(config.server.maxHeaderCount, 64);
  });
});
