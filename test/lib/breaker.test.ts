import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CircuitBreaker, PASS, PROBE, type BreakerState } from '../../src/lib/breaker.ts';
import { ManualClock } from '../helpers/clock.ts';

describe('CircuitBreaker', () => {
  const make = (failures = 3, cooldownMs = 1000) => {
    const clock = new ManualClock(1_000_000);
    return { clock, breaker: new CircuitBreaker({ failures, cooldownMs }, clock) };
  };

  test('opens after `failures` consecutive failures and refuses for the cooldown', () => {
    const { clock, breaker } = make();
    for (let i = 0; i < 2; i++) {
      assert.equal(breaker.admit(), PASS);
      breaker.failed(false);
    }
    assert.equal(breaker.state, 'closed');
    breaker.failed(false);
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.admit(), 1000);
    clock.advance(400);
    assert.equal(breaker.admit(), 600);
  });

  test('a success in between resets the count', () => {
    const { breaker } = make();
    breaker.failed(false);
    breaker.failed(false);
    breaker.succeeded(false);
    breaker.failed(false);
    breaker.failed(false);
    assert.equal(breaker.state, 'closed');
  });

  test('after the cooldown exactly one probe passes; its success closes the breaker', () => {
    const { clock, breaker } = make(1);
    breaker.failed(false);
    clock.advance(1000);
    assert.equal(breaker.state, 'half_open');
    assert.equal(breaker.admit(), PROBE);
    assert.ok(breaker.admit() > 0, 'a second request waits for the probe');
    breaker.succeeded(true);
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.admit(), PASS);
  });

  test('a failed probe opens it for another cooldown', () => {
    const { clock, breaker } = make(1);
    breaker.failed(false);
    clock.advance(1000);
    assert.equal(breaker.admit(), PROBE);
    clock.advance(100);
    breaker.failed(true);
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.admit(), 1000);
  });

  test('outcomes of requests admitted before it opened change nothing', () => {
    const { clock, breaker } = make(1);
    breaker.failed(false);
    breaker.succeeded(false);
    assert.equal(breaker.state, 'open', 'a late success does not close it');
    clock.advance(1000);
    assert.equal(breaker.admit(), PROBE);
    breaker.failed(false);
    assert.equal(breaker.state, 'half_open', 'a late failure does not reopen it while the probe runs');
  });

  test('a wall clock stepped back while open keeps it open for one cooldown at most, not for the size of the step', () => {
    const { clock, breaker } = make(1);
    breaker.failed(false);
    clock.advance(-3_600_000); // NTP steps the clock back an hour, or a VM resumes
    assert.equal(breaker.state, 'open');
    assert.ok(breaker.admit() <= 1000, 'Retry-After is no longer than the cooldown');
    clock.advance(1000);
    assert.equal(breaker.state, 'half_open', '/readyz does not stay 503 for the hour');
    assert.equal(breaker.admit(), PROBE);
  });

  test('failures: 0 never opens', () => {
    const { breaker } = make(0);
    for (let i = 0; i < 100; i++) breaker.failed(false);
    assert.equal(breaker.admit(), PASS);
  });
  test('reports each change of state, and nothing while the state stays', () => {
    const clock = new ManualClock(1_000_000);
    const seen: BreakerState[] = [];
    const breaker = new CircuitBreaker({ failures: 2, cooldownMs: 1000 }, clock, (state) => seen.push(state));
    breaker.failed(false);
    breaker.succeeded(false);
    assert.deepEqual(seen, []);
    breaker.failed(false);
    breaker.failed(false);
    assert.equal(breaker.admit(), 1000);
    assert.deepEqual(seen, ['open']);
    clock.advance(1000);
    assert.equal(breaker.admit(), PROBE);
    assert.equal(breaker.admit(), 1, 'while the probe is under way');
    breaker.failed(true);
    clock.advance(1000);
    assert.equal(breaker.admit(), PROBE);
    breaker.succeeded(true);
    assert.deepEqual(seen, ['open', 'half_open', 'open', 'half_open', 'closed']);
  });
});
