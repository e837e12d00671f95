import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Balancer, type BalancePolicy } from '../../src/upstream/balancer.ts';
import { Target } from '../../src/upstream/target.ts';
import { ManualClock } from '../helpers/clock.ts';

const POOL = { connect: { timeout: 1000 } };

function targets(...weights: number[]): Target[] {
  return weights.map((weight, i) => new Target(`http://127.0.0.1:${9000 + i}`, weight, POOL, {}));
}

function policy(overrides: Partial<BalancePolicy> = {}): BalancePolicy {
  return {
    balance: 'least-request',
    outlier: { consecutiveFailures: 3, baseEjectionMs: 1000, maxEjectionMs: 2500, statuses: [503] },
    slowStartMs: 0,
    ...overrides,
  };
}

/** How many of `n` picks each target got, in the targets' order. */
function spread(balancer: Balancer, n: number): number[] {
  const counts = new Map<Target, number>();
  for (let i = 0; i < n; i++) {
    const target = balancer.pick(null);
    counts.set(target, (counts.get(target) ?? 0) + 1);
  }
  return balancer.targets.map((t) => counts.get(t) ?? 0);
}

describe('the balancer of a service with several targets', () => {
  test('idle targets share requests by weight, under either policy', () => {
    for (const balance of ['least-request', 'round-robin'] as const) {
      assert.deepEqual(spread(new Balancer(targets(1, 1, 2), policy({ balance }), new ManualClock(), () => {}), 40), [10, 10, 20], balance);
    }
  });

  test('round robin takes equal targets in turn', () => {
    const balancer = new Balancer(targets(1, 1, 1), policy({ balance: 'round-robin' }), new ManualClock(), () => {});
    const order = Array.from({ length: 6 }, () => balancer.targets.indexOf(balancer.pick(null)));
    assert.deepEqual(order, [0, 1, 2, 0, 1, 2]);
  });

  test('least-request sends fewer requests to a target with many under way', () => {
    const balancer = new Balancer(targets(1, 1), policy(), new ManualClock(), () => {});
    const [busy] = balancer.targets as [Target, Target];
    busy.outstanding = 3;
    // Weight 1/4 against 1: a fifth of the picks.
    assert.deepEqual(spread(balancer, 40), [8, 32]);
  });

  test('round robin ignores the requests under way', () => {
    const balancer = new Balancer(targets(1, 1), policy({ balance: 'round-robin' }), new ManualClock(), () => {});
    (balancer.targets[0] as Target).outstanding = 3;
    assert.deepEqual(spread(balancer, 40), [20, 20]);
  });

  test('a retry avoids the target the first attempt failed on', () => {
    const balancer = new Balancer(targets(1, 1, 1), policy(), new ManualClock(), () => {});
    for (let i = 0; i < 10; i++) {
      const first = balancer.pick(null);
      assert.notEqual(balancer.pick(first), first);
    }
  });

  test('a retry goes to the same target when it is the only one in the balance', () => {
    const clock = new ManualClock();
    const balancer = new Balancer(
      targets(1, 1),
      policy({ outlier: { consecutiveFailures: 1, baseEjectionMs: 1000, maxEjectionMs: 1000, statuses: [] } }),
      clock,
      () => {},
    );
    const [a, b] = balancer.targets as [Target, Target];
    balancer.failed(b);
    assert.equal(balancer.pick(a), a);
  });

  test('failures in a row eject a target for a cooldown that grows with each ejection, up to the maximum', () => {
    const clock = new ManualClock();
    const ejected: number[] = [];
    const balancer = new Balancer(targets(1, 1), policy(), clock, (_t, ms) => ejected.push(ms));
    const [a, b] = balancer.targets as [Target, Target];
    balancer.failed(a);
    balancer.failed(a);
    assert.ok(balancer.available(a, clock.now()), 'two failures are not enough');
    balancer.failed(a);
    assert.ok(!balancer.available(a, clock.now()));
    assert.deepEqual(spread(balancer, 5), [0, 5]);
    clock.advance(1000);
    assert.ok(balancer.available(a, clock.now()), 'back after the base cooldown');
    for (let i = 0; i < 3; i++) balancer.failed(a);
    clock.advance(1999);
    assert.ok(!balancer.available(a, clock.now()), 'the second ejection lasts twice as long');
    clock.advance(1);
    for (let i = 0; i < 3; i++) balancer.failed(a);
    assert.deepEqual(ejected, [1000, 2000, 2500]);
    assert.ok(balancer.available(b, clock.now()));
  });

  test('a success between failures starts the count again, and the cooldown from its base', () => {
    const clock = new ManualClock();
    const ejected: number[] = [];
    const balancer = new Balancer(targets(1, 1), policy(), clock, (_t, ms) => ejected.push(ms));
    const a = balancer.targets[0] as Target;
    balancer.failed(a);
    balancer.failed(a);
    balancer.succeeded(a);
    balancer.failed(a);
    balancer.failed(a);
    assert.ok(balancer.available(a, clock.now()));
    balancer.failed(a);
    clock.advance(1000);
    balancer.succeeded(a);
    for (let i = 0; i < 3; i++) balancer.failed(a);
    assert.deepEqual(ejected, [1000, 1000]);
  });

  test('with every target out, the least recently failed one is tried', () => {
    const clock = new ManualClock();
    const balancer = new Balancer(
      targets(1, 1, 1),
      policy({ outlier: { consecutiveFailures: 1, baseEjectionMs: 60_000, maxEjectionMs: 60_000, statuses: [] } }),
      clock,
      () => {},
    );
    const [a, b, c] = balancer.targets as [Target, Target, Target];
    balancer.failed(b);
    clock.advance(10);
    balancer.failed(a);
    clock.advance(10);
    balancer.failed(c);
    assert.equal(balancer.pick(null), b);
  });

  test('a service of one target is never ejected', () => {
    const balancer = new Balancer(
      targets(1),
      policy({ outlier: { consecutiveFailures: 1, baseEjectionMs: 1000, maxEjectionMs: 1000, statuses: [] } }),
      new ManualClock(),
      () => {
        assert.fail('ejected');
      },
    );
    const only = balancer.targets[0] as Target;
    balancer.failed(only);
    assert.equal(balancer.pick(null), only);
    assert.equal(only.failuresInRow, 0);
  });

  test('a target back from ejection grows its share over slowStartMs', () => {
    const clock = new ManualClock();
    const balancer = new Balancer(
      targets(1, 1),
      policy({ balance: 'round-robin', slowStartMs: 10_000, outlier: { consecutiveFailures: 1, baseEjectionMs: 1000, maxEjectionMs: 1000, statuses: [] } }),
      clock,
      () => {},
    );
    const a = balancer.targets[0] as Target;
    balancer.failed(a);
    clock.advance(1000);
    assert.equal(balancer.effectiveWeight(a, clock.now()), 0.1, 'a floor of a tenth at first');
    clock.advance(5000);
    assert.equal(balancer.effectiveWeight(a, clock.now()), 0.5);
    assert.deepEqual(spread(balancer, 30), [10, 20]);
    clock.advance(5000);
    assert.equal(balancer.effectiveWeight(a, clock.now()), 1);
  });

  test('the probe takes a target out and brings it back with slow start', () => {
    const clock = new ManualClock();
    const balancer = new Balancer(targets(1, 1), policy({ slowStartMs: 1000 }), clock, () => {});
    const a = balancer.targets[0] as Target;
    balancer.probed(a, false);
    assert.deepEqual(spread(balancer, 4), [0, 4]);
    balancer.probed(a, true);
    clock.advance(500);
    assert.equal(balancer.effectiveWeight(a, clock.now()), 0.5);
  });
});
