import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configWith } from '../../src/config/load.ts';
import { problemsOf } from '../helpers/config.ts';

describe('limit keys', () => {
  test('server.maxHeaderCount defaults to 100 and is range-checked', () => {
    assert.equal(configWith({}).server.maxHeaderCount, 100);
    assert.deepEqual(problemsOf(() => configWith({ server: { maxHeaderCount: 2 } })), ['server.maxHeaderCount: expected an integer from 8 to 10000, got 2']);
  });

  test('a head time-out longer than the whole-request time-out is refused at load, not by node:http at start', () => {
    assert.deepEqual(problemsOf(() => configWith({ server: { headersTimeoutMs: 5000, requestTimeoutMs: 1000 } })), [
      'server.headersTimeoutMs: must not exceed server.requestTimeoutMs (1000), got 5000',
    ]);
  });
});
