import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configProblems as problemsOf } from '../helpers/config.ts';
import { configWith, loadConfig } from '../../src/gateway/load-config.ts';

describe('config keys of the upstream failure behaviour', () => {
  test('defaults: stale-if-error 300 s, stale-while-revalidate off, breaker 5 failures and 5 s', () => {
    const config = configWith({});
    assert.equal(config.cache.staleIfErrorSeconds, 300);
    assert.equal(config.cache.staleWhileRevalidateSeconds, 0);
    assert.deepEqual(config.upstream.breaker, { failures: 5, cooldownMs: 5000 });
  });

  test('out-of-range or mistyped values are refused naming the key and the range', () => {
    const problems = problemsOf({
      cache: { staleIfErrorSeconds: -1, staleWhileRevalidateSeconds: 86_401 },
      upstream: { breaker: { failures: 1.5, cooldownMs: 0 } },
    });
    assert.deepEqual(problems.sort(), [
      'cache.staleIfErrorSeconds: expected an integer from 0 to 86400, got -1',
      'cache.staleWhileRevalidateSeconds: expected an integer from 0 to 86400, got 86401',
      'upstream.breaker.cooldownMs: expected an integer from 1 to 86400000, got 0',
      'upstream.breaker.failures: expected an integer from 0 to 1000000, got 1.5',
    ]);
  });

  test('a typo in the breaker section gets a hint', () => {
    assert.deepEqual(problemsOf({ upstream: { breaker: { failure: 3 } } }), ['upstream.breaker.failure: unknown key (did you mean "failures"?)']);
  });

  test('environment variables reach the nested breaker keys', () => {
    const config = loadConfig({
      env: { HYPERGATE_UPSTREAM_BREAKER_FAILURES: '0', HYPERGATE_UPSTREAM_BREAKER_COOLDOWN_MS: '250', HYPERGATE_CACHE_STALE_IF_ERROR_SECONDS: '5' },
    });
    assert.deepEqual(config.upstream.breaker, { failures: 0, cooldownMs: 250 });
    assert.equal(config.cache.staleIfErrorSeconds, 5);
  });
});
