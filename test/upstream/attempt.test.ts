import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Deadline } from '../../src/lib/deadline.ts';
import { HgError } from '../../src/lib/errors.ts';
import { Attempt, attemptError, unavailable } from '../../src/upstream/attempt.ts';

/** An attempt whose deadline never fires (cleared at once): these tests read decisions, not time. */
function attempt(): Attempt {
  const deadline = new Deadline(60_000, 'unused');
  deadline.clear();
  const made = new Attempt(deadline);
  made.begin();
  return made;
}

describe('the attempts of an upstream request', () => {
  test('only the first attempt of an idempotent request, refused or lost before any answer, may go once more', () => {
    const first = attempt();
    assert.equal(first.mayRetry(true, 'refused'), true);
    assert.equal(first.mayRetry(true, 'lost'), true);
    assert.equal(first.mayRetry(false, 'refused'), false, 'POST and PATCH are never sent twice');
    assert.equal(first.mayRetry(true, 'timeout'), false);
    assert.equal(first.mayRetry(true, 'other'), false);
    first.status = 200;
    assert.equal(first.mayRetry(true, 'lost'), false, 'the answer had begun');
    const second = attempt();
    second.begin();
    assert.equal(second.mayRetry(true, 'refused'), false, 'retried once at most');
  });

  test('each attempt starts over: unreachable, no status', () => {
    const one = attempt();
    one.outcome = 'ok';
    one.status = 200;
    one.begin();
    assert.equal(one.outcome, 'unreachable');
    assert.equal(one.status, 0);
    assert.equal(one.number, 2);
  });

  test('unreachable, time-outs and 5xx count against the breaker; other answers do not', () => {
    const one = attempt();
    assert.equal(one.failed, true);
    one.outcome = 'timeout';
    assert.equal(one.failed, true);
    one.outcome = 'bad_status';
    one.status = 503;
    assert.equal(one.failed, true);
    one.status = 404;
    one.outcome = 'not_found';
    assert.equal(one.failed, false);
    one.status = 200;
    one.outcome = 'bad_body';
    assert.equal(one.failed, false, 'a body that does not decode is the upstream answering');
  });

  test('a time-out is a 504 naming the service and its deadline; a typed error stays as it is; anything else is a 502', () => {
    const one = attempt();
    const timeout = attemptError(new Error('slow'), 'timeout', one, 'The upstream service', 2000);
    assert.equal(timeout.code, 'HG_ERR_UPSTREAM_TIMEOUT');
    assert.equal(timeout.detail, 'The upstream service did not answer within 2000 ms.');
    assert.equal(one.outcome, 'timeout');
    const typed = new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail: 'invalid JSON' });
    const two = attempt();
    two.outcome = 'bad_body';
    assert.equal(attemptError(typed, 'other', two, 'x', 1), typed);
    assert.equal(two.outcome, 'bad_body');
    const lost = attemptError(new Error('reset'), 'lost', attempt(), 'The upstream service "catalogue"', 1);
    assert.equal(lost.code, 'HG_ERR_UPSTREAM_BAD_GATEWAY');
    assert.equal(lost.detail, 'The upstream service "catalogue" could not be reached.');
  });

  test('a refusal by the breaker is a 503 with Retry-After in whole seconds, at least 1', () => {
    assert.deepEqual(unavailable(1500, 'The upstream service').headers, { 'Retry-After': '2' });
    assert.deepEqual(unavailable(1, 'The upstream service').headers, { 'Retry-After': '1' });
    assert.equal(unavailable(1, 'The upstream service').status, 503);
  });
});
