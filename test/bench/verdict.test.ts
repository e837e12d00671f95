/**
 * The rule that says whether interleaved rounds decide a difference (bench/lib/verdict.ts), and
 * the --compare table built on it (bench/lib/compare.ts), from made-up rounds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { comparisonTable, perRoundRatios } from '../../bench/lib/compare.ts';
import type { RunRecord } from '../../bench/lib/measure.ts';
import { cv, decide, spread } from '../../bench/lib/verdict.ts';

const names = { a: 'old', b: 'new' };

describe("the verdict on two sides' rounds", () => {
  test('spread and coefficient of variation', () => {
    assert.equal(spread([100, 90, 110]), 0.2);
    assert.equal(spread([100]), 0);
    assert.equal(cv([5, 5, 5]), 0);
    assert.ok(Math.abs(cv([90, 100, 110]) - 0.1) < 1e-12);
  });

  test('a 7% loss well outside steady rounds is decided, and named lower', () => {
    const v = decide([100, 101, 99], [93, 94, 92], names);
    assert.equal(v.decided, true);
    assert.equal(v.text, '7.0% lower');
    assert.ok(Math.abs(v.ratio - 0.93) < 1e-12);
  });

  test('the words given name the direction', () => {
    assert.equal(decide([10, 10, 10], [11, 11, 11], names, { up: 'more CPU per request', down: 'less CPU per request' }).text, '10.0% more CPU per request');
  });

  test("a difference within the spread of one side's rounds is too noisy to decide", () => {
    const v = decide([100, 104, 97], [98, 98, 98], names);
    assert.equal(v.decided, false);
    assert.match(v.text, /^too noisy to decide: the difference \(2\.0%\) is within the spread of old's rounds \(7\.0%\)$/);
  });

  test('rounds that vary by more than 5% are too noisy, however large the difference', () => {
    const v = decide([100, 80, 120], [50, 50, 50], names);
    assert.equal(v.decided, false);
    assert.match(v.text, /old's rounds vary by 20\.0% \(above 5\.0%\)/);
  });

  test('fewer than three rounds cannot show the noise', () => {
    const v = decide([100], [50], names);
    assert.equal(v.decided, false);
    assert.equal(v.text, 'too noisy to decide: 1 round (at least 3 needed to see the noise)');
  });
});

function record(server: string, round: number, reqPerSec: number, cpuUsPerRequest: number): RunRecord {
  return {
    scenario: 'hot',
    server,
    round,
    reqPerSec,
    p50Us: 1000,
    p90Us: 1500,
    p99Us: 2000,
    maxUs: 3000,
    requests: reqPerSec,
    durationUs: 1e6,
    errors: 0,
    badStatus: 0,
    cpuUsPerRequest,
    upstreamRequests: 0,
    serverCpuShare: 1,
  };
}

describe('the comparison table', () => {
  // Interleaved rounds: the baseline drifts down, both checkouts with it.
  const records = [
    record('baseline', 1, 100_000, 10),
    record('hypergate@old', 1, 83_000, 12),
    record('hypergate', 1, 76_000, 13),
    record('baseline', 2, 96_000, 10),
    record('hypergate@old', 2, 80_000, 12),
    record('hypergate', 2, 73_000, 13.1),
    record('baseline', 3, 98_000, 10),
    record('hypergate@old', 3, 81_500, 12.1),
    record('hypergate', 3, 74_300, 13),
  ];

  test('each checkout against the baseline of its own round', () => {
    assert.deepEqual(
      perRoundRatios(records, 'hot', 'hypergate@old').map((r) => r.toFixed(3)),
      ['0.830', '0.833', '0.832'],
    );
  });

  test('req/s, CPU and the share of the ceiling, each with its verdict, and the rule', () => {
    const text = comparisonTable(records, 'hypergate@old', 'hypergate');
    assert.match(text, /\| hot \| req\/s \| 81500 \| 74300 \| 0\.912 \| 3\.7%; 4\.0% \| 8\.8% lower \|/);
    assert.match(text, /\| hot \| server CPU µs\/request \| 12\.00 \| 13\.00 \| 1\.083 \| 0\.8%; 0\.8% \| 8\.3% more CPU per request \|/);
    assert.match(
      text,
      /\| hot \| req\/s × baseline, per round: median \(min–max\) \| 0\.832 \(0\.830–0\.833\) \| 0\.760 \(0\.758–0\.760\) \| 0\.914 \| [\d.]+%; [\d.]+% \| 8\.6% lower \|/,
    );
    assert.match(text, /\| hot \| p99 ms \| 2\.00 \| 2\.00 \| 1\.000 \| 0\.0%; 0\.0% \| {2}\|/);
    assert.match(text, /A difference is decided when each side has at least 3 rounds/);
  });
});
