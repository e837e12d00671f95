import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Answer, ResponseHeaders } from '../../src/lib/exchange.ts';
import { planRead, planWrite, readResult, writeResult } from '../../src/upstream/answer.ts';
import { ManualClock } from '../helpers/clock.ts';

const WHO = 'The upstream service';
const clock = new ManualClock(Date.UTC(2026, 0, 1));
const json = (body: string, headers: ResponseHeaders = {}, status = 200): Answer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: Buffer.from(body),
});
const same = (value: unknown): unknown => value;

/** How an upstream's answer is decoded: what is read, what is refused, and what the cache is told. */
describe("decoding an upstream's answer", () => {
  test("a read keeps a 200's JSON (any application/*+json), refuses other 200s, and drains every other status", () => {
    assert.equal(planRead(200, { 'content-type': 'application/json; charset=utf-8' }, 100), 'keep');
    assert.equal(planRead(200, { 'content-type': 'Application/HAL+JSON' }, 100), 'keep');
    assert.equal(planRead(200, { 'content-type': 'text/html' }, 100), 'refuse');
    assert.equal(planRead(200, {}, 100), 'refuse');
    assert.equal(planRead(200, { 'content-type': 'application/json', 'content-length': '101' }, 100), 'refuse');
    assert.equal(planRead(404, { 'content-type': 'application/json' }, 100), 'drain');
    assert.equal(planRead(500, {}, 100), 'drain');
  });

  test('a write keeps a JSON body, refuses one announced over the limit, and drains none, a 204 or any other type', () => {
    assert.equal(planWrite(201, { 'content-type': 'application/json' }, 100), 'keep');
    assert.equal(planWrite(422, { 'content-type': 'application/problem+json' }, 100), 'keep');
    assert.equal(planWrite(201, { 'content-type': 'application/json', 'content-length': '101' }, 100), 'refuse');
    assert.equal(planWrite(201, { 'content-type': 'application/json', 'content-length': '0' }, 100), 'drain');
    assert.equal(planWrite(204, { 'content-type': 'application/json' }, 100), 'drain');
    assert.equal(planWrite(201, { 'content-type': 'text/plain' }, 100), 'drain');
  });

  test('a 200 is decoded with its freshness, Age and ETag; a 404 is not found', () => {
    const result = readResult(json('{"id":1}', { 'cache-control': 'max-age=60', age: '5', etag: 'W/"v1"' }), same, WHO, clock);
    assert.deepEqual(result, {
      found: true,
      value: { id: 1 },
      freshness: { noStore: false, maxAgeSeconds: 60, staleAllowed: true },
      ageSeconds: 5,
      etag: 'W/"v1"',
    });
    assert.deepEqual(readResult(json('', {}, 404), same, WHO, clock), { found: false });
  });

  test('an Age that is not a positive whole number counts as 0, and an ETag that is not an entity-tag as none', () => {
    for (const age of ['-3', '1.5', 'soon', '0']) {
      const result = readResult(json('{}', { age, etag: 'v1' }), same, WHO, clock);
      assert.ok(result.found);
      assert.equal(result.ageSeconds, 0, age);
      assert.equal(result.etag, null);
    }
  });

  test('Expires without a Date is measured from when the answer arrived, by the clock', () => {
    const expires = new Date(clock.now() + 30_000).toUTCString();
    const result = readResult(json('{}', { expires }), same, WHO, clock);
    assert.ok(result.found);
    assert.equal(result.freshness.maxAgeSeconds, 30);
  });

  test('another status, a body that is not JSON, invalid JSON or a body over the limit is a 502 naming the service', () => {
    const refused = (res: Answer, detail: RegExp): void =>
      assert.throws(
        () => readResult(res, same, WHO, clock),
        (err: { code?: string; detail?: string }) => err.code === 'HG_ERR_UPSTREAM_BAD_GATEWAY' && detail.test(err.detail ?? ''),
      );
    refused(json('{}', {}, 500), /^The upstream service answered with status 500\.$/);
    refused({ status: 200, headers: { 'content-type': 'text/html' }, body: Buffer.from('<p>') }, /a body that is not JSON/);
    refused(json('{"id":'), /invalid JSON/);
    refused({ status: 200, headers: { 'content-type': 'application/json' }, body: null }, /larger than allowed/);
  });

  test("a decoder's refusal is the read's failure, as it threw it", () => {
    const wrong = new Error('not a record');
    assert.throws(
      () =>
        readResult(
          json('{}'),
          () => {
            throw wrong;
          },
          WHO,
          clock,
        ),
      (err) => err === wrong,
    );
  });

  test('a write answer comes back whatever its status, its JSON parsed and a problem body marked', () => {
    assert.deepEqual(writeResult(json('{"id":9}', { etag: '"9"' }, 201), 100, clock), {
      status: 201,
      etag: '"9"',
      freshness: { noStore: false, maxAgeSeconds: null, staleAllowed: true },
      json: { id: 9 },
      unreadable: null,
      problem: false,
    });
    const problem = writeResult(
      { status: 422, headers: { 'content-type': 'application/problem+json; charset=utf-8' }, body: Buffer.from('{"detail":"no"}') },
      100,
      clock,
    );
    assert.equal(problem.problem, true);
    assert.deepEqual(problem.json, { detail: 'no' });
    const none = writeResult({ status: 204, headers: {}, body: null }, 100, clock);
    assert.equal(none.json, undefined);
    // The upstream made the change whatever its body: a body that cannot be read is said, not thrown.
    assert.match(
      String(writeResult({ status: 201, headers: { 'content-type': 'application/json' }, body: null }, 100, clock).unreadable),
      /larger than allowed/,
    );
    assert.match(
      String(writeResult({ status: 201, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"id":') }, 100, clock).unreadable),
      /not valid JSON/,
    );
  });
});
