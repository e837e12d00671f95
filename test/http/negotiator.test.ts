import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { acceptsJson, Negotiator, NONE_ACCEPTABLE } from '../../src/protocol/negotiate.ts';

const both = new Negotiator(['application/json', 'application/hal+json']);
const JSON_I = 0;
const HAL = 1;

describe('content negotiation', () => {
  test('a missing, empty, application/json or */* Accept picks JSON', () => {
    for (const header of [undefined, '', 'application/json', '*/*']) assert.equal(both.pick(header), JSON_I);
  });

  test('application/hal+json picks HAL, and application/json does not match it', () => {
    assert.equal(both.pick('application/hal+json'), HAL);
    assert.equal(new Negotiator(['application/hal+json']).pick('application/json'), NONE_ACCEPTABLE);
  });

  test('the highest q-value wins over the order of the offer', () => {
    assert.equal(both.pick('application/json;q=0.5, application/hal+json'), HAL);
    assert.equal(both.pick('application/hal+json;q=0.4, application/json;q=0.9'), JSON_I);
  });

  test('equal quality goes to the server preference (JSON first)', () => {
    assert.equal(both.pick('application/hal+json, application/json'), JSON_I);
    assert.equal(both.pick('application/*'), JSON_I);
  });

  test('the most specific range decides: q=0 on the exact type refuses it even under */*', () => {
    assert.equal(both.pick('*/*, application/json;q=0'), HAL);
    assert.equal(both.pick('application/*;q=0, application/hal+json'), HAL);
  });

  test('nothing acceptable gives NONE_ACCEPTABLE', () => {
    for (const header of ['text/html', 'application/xml, text/*', '*/*;q=0', 'garbage', 'application/json;q=x']) {
      assert.equal(both.pick(header), NONE_ACCEPTABLE, header);
    }
  });

  test('memoised answers stay right when the header repeats and the memo fills up', () => {
    for (let i = 0; i < 600; i++) assert.equal(both.pick(`application/hal+json;v=${i}`), HAL);
    assert.equal(both.pick('application/hal+json;v=1'), HAL);
    assert.equal(both.pick('text/plain'), NONE_ACCEPTABLE);
  });

  test('acceptsJson keeps its single-format meaning', () => {
    assert.equal(acceptsJson('application/json'), true);
    assert.equal(acceptsJson('text/html;q=1, */*;q=0.1'), true);
    assert.equal(acceptsJson('application/hal+json'), false);
  });

  test('a negotiator needs at least one type', () => {
    assert.throws(() => new Negotiator([]));
  });
});
