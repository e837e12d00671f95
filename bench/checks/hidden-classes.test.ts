/**
 * Hidden-class checks (`npm run bench:maps`): V8's map log counted over thousands of tokens and
 * upstream requests. They measure V8's behaviour under load, as the benchmarks do, so they run
 * with them and not in `npm test`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertNoHiddenClassPer, hiddenClassesMade } from './map-log.ts';

/** Runs the script over `count` items: each must have been handled, and none may have made hidden classes of its own. */
async function assertScriptMakesNoHiddenClassPer(script: string, count: number, what: string): Promise<void> {
  const { stdout, madeFor } = await hiddenClassesMade(script, count);
  assert.equal(stdout, String(count));
  assertNoHiddenClassPer(madeFor, count, what);
}

/**
 * Regression (bench/RESULTS.md, memory): each new token left two hidden classes (a map and its
 * descriptor array each, in the old generation). Our options were `{ ...options, currentDate }`,
 * and jose, given a getKey function, returns `{ ...result, key }`. A child process verifies 5,000
 * new HS256 tokens through a real TokenVerifier with V8's map log on.
 */
describe('verifying new tokens', () => {
  test('makes no hidden class per token', () => assertScriptMakesNoHiddenClassPer('verify-tokens.ts', 5000, 'tokens'));
});

/**
 * Regression (bench/RESULTS.md, memory): each upstream request's headers were `{ ...base }` with
 * x-request-id added, which V8 (Node 20) gave a hidden class of its own once optimised: a map, a
 * descriptor array and an enumeration cache (undici walks the headers' keys) in the old
 * generation per cache miss. A child process sends 5,000 requests through a real UpstreamClient,
 * with forwarded claims and trace context, to a real upstream, with V8's map log on.
 */
describe('requests to an upstream', () => {
  test('make no hidden class per request', () => assertScriptMakesNoHiddenClassPer('upstream-requests.ts', 5000, 'requests'));
});
