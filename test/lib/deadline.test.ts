import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { Deadline, type Abortable } from '../../src/lib/deadline.ts';

/** Something in flight that records why it was aborted. */
function inFlight(): Abortable & { readonly reasons: Error[] } {
  const reasons: Error[] = [];
  return {
    reasons,
    abort(reason: Error): void {
      reasons.push(reason);
    },
  };
}

describe('a deadline', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  test('when it passes, it says so and aborts what is in flight with an error saying why', () => {
    const work = inFlight();
    const deadline = new Deadline(100, 'too slow', work);
    mock.timers.tick(99);
    assert.equal(deadline.passed, false);
    assert.equal(work.reasons.length, 0);
    mock.timers.tick(1);
    assert.equal(deadline.passed, true);
    assert.equal(work.reasons.length, 1);
    assert.equal(work.reasons[0]?.message, 'too slow');
  });

  test('cleared in time, it never passes', () => {
    const work = inFlight();
    const deadline = new Deadline(100, 'too slow', work);
    deadline.clear();
    mock.timers.tick(1000);
    assert.equal(deadline.passed, false);
    assert.equal(work.reasons.length, 0);
  });

  test('only what is in flight when it passes is aborted: the next attempt, not the first', () => {
    const first = inFlight();
    const second = inFlight();
    const deadline = new Deadline(100, 'too slow', first);
    mock.timers.tick(50);
    deadline.current = second;
    mock.timers.tick(50);
    assert.equal(first.reasons.length, 0);
    assert.equal(second.reasons.length, 1);
  });

  test('with nothing in flight it still passes, and aborts nothing', () => {
    const deadline = new Deadline(100, 'too slow');
    mock.timers.tick(100);
    assert.equal(deadline.passed, true);
    assert.equal(deadline.current, null);
  });
});
