import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { problemsOf } from '../helpers/config.ts';
import { configWith } from '../../src/gateway/load-config.ts';

describe('plan keys', () => {
  test('no plan by default; a plan takes its quotas as an array of objects', () => {
    const config = configWith({ plans: { gold: { requestsPerSecond: 10, quotas: [{ requests: 100000, per: 'month' }] } } });
    assert.deepEqual(config.plans, { gold: { requestsPerSecond: 10, burst: 20, quotas: [{ requests: 100000, per: 'month' }] } });
    assert.deepEqual(configWith({}).plans, {});
    assert.equal(configWith({}).auth.planClaim, null);
  });

  test('a plan named by rateLimit.defaultPlan or anonymousPlan must be declared', () => {
    assert.deepEqual(
      [...problemsOf(() => configWith({ plans: { gold: { requestsPerSecond: 10 } }, rateLimit: { defaultPlan: 'glod', anonymousPlan: 'free' } }))].sort(),
      ['rateLimit.anonymousPlan: "free" is not declared in plans', 'rateLimit.defaultPlan: "glod" is not declared in plans (did you mean "gold"?)'],
    );
    assert.deepEqual(
      problemsOf(() => configWith({ rateLimit: { defaultPlan: 'free' } })),
      ['rateLimit.defaultPlan: "free" is not declared in plans (no plan is declared)'],
    );
  });

  test("a quota's keys, a plan's name and a route limit are checked", () => {
    const problems = [
      ...problemsOf(() =>
        configWith({
          plans: { 'a b': { requestsPerSecond: 1, quotas: [{ requests: 0, per: 'week' }, 'x'] } },
          resources: { customers: { writeRateLimit: { burst: 2 } } },
        }),
      ),
    ].sort();
    assert.deepEqual(problems, [
      'plans.a b.quotas[0].per: expected one of day, month, got "week"',
      'plans.a b.quotas[0].requests: expected an integer from 1 to 9007199254740991, got 0',
      'plans.a b.quotas[1]: expected an object, got "x"',
      'resources.customers.writeRateLimit.requestsPerSecond: expected an integer from 1 to 1000000, got undefined',
    ]);
    assert.deepEqual(
      problemsOf(() => configWith({ plans: { 'a b': { requestsPerSecond: 1 } } })),
      ['plans.a b: expected a name of letters, digits, ".", "_" and "-" (at most 64), as the RateLimit fields carry it'],
    );
  });
});
