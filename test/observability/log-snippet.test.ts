import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logSnippet, SNIPPET_BYTES } from '../../src/observability/log-snippet.ts';

describe("a snippet of an upstream's body for the log", () => {
  test('a short body is shown whole, its control characters escaped', () => {
    assert.equal(logSnippet(Buffer.from('bad\r\nthing\u0000'), 11, []), 'bad\\u000d\\u000athing\\u0000');
  });

  test('a long one is cut at a character boundary and says how long it was', () => {
    const body = Buffer.from('é'.repeat(600));
    const snippet = logSnippet(body.subarray(0, 1024), body.length, []);
    assert.equal(snippet, `${'é'.repeat(SNIPPET_BYTES / 2)}… (1200 bytes in all)`);
  });

  test('secrets are redacted, also the start of one the sample cut off', () => {
    const secret = 'k3y-0f-the-catalogue';
    const body = Buffer.from(`key=${secret}; auth=Basic dXNlcjpwdw==`);
    assert.equal(logSnippet(body, body.length, [secret]), 'key=[redacted]; auth=Basic [redacted]');
    assert.equal(logSnippet(Buffer.from(`echo ${secret.slice(0, 8)}`), 2000, [secret]), 'echo … (2000 bytes in all)');
  });
});
